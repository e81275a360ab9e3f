"""Checkers: decide whether an answer matches the item's gold. A vocabulary that installed
packages extend through entry points (group vbw.checkers; see vbw.registry).

How it works and why: docs/design.md, section vbw.task.check.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from vbw.task.base import RegexPattern, StrictModel
from vbw.task.bfcl_rules import (PARAMETER_TYPES, calls_reason, official_reason,
                                 param_group, param_reason)
from vbw.task.jsontext.values import as_float, is_number
from vbw.task.regex import Regex, compile_task_regex
from vbw.task.regexample import examples
from vbw.task.kinds import BaseChecker, Part
from vbw.task.registry import Registry

CHECKERS: Registry[StrictModel] = Registry("checker", group="vbw.checkers")
_NORMALISER_FORM = '{normalize: [strip, lower], delete_chars: ""}'
CANDIDATES = 8  # gold-shaped answers proposed at most per item


class _GoldIsTheAnswer:
    """For kinds whose gold is itself an answer they call right. `answers_complete`: the
    candidates stand for every right answer, so if none is schema-valid, no right answer
    is (a regex checker's few strings do not: it is False there)."""

    answers_complete: ClassVar[bool] = True

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """The gold itself, the one answer these kinds call right."""
        return [gold]


@CHECKERS.register
class NumericChecker(_GoldIsTheAnswer, BaseChecker):
    """Both are (non-boolean) numbers and |answer - gold| < tolerance, compared as floats (a
    number too large for a float is +-inf: never within tolerance of a finite gold)."""

    kind: Literal["numeric"]
    tolerance: float = 1e-6

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` is a number within `tolerance` of `gold`."""
        ta, tg = type(answer), type(gold)
        if (ta is float or ta is int) and (tg is float or tg is int):  # the common case
            try:
                return abs(float(answer) - float(gold)) < self.tolerance
            except OverflowError:  # an int too large for a float: as_float's +-inf below
                pass
        if not (is_number(answer) and is_number(gold)):
            return False
        return abs(as_float(answer) - as_float(gold)) < self.tolerance


@CHECKERS.register
class ExactChecker(_GoldIsTheAnswer, BaseChecker):
    """The answer equals the gold as JSON values do: a boolean is only equal to a boolean
    (true is not 1), numbers by value, strings, lists and objects exactly."""

    kind: Literal["exact"]

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` equals `gold` (booleans apart from numbers, at any depth)."""
        return _same(answer, gold)


class StringNormaliser(_GoldIsTheAnswer, BaseChecker):
    """How strings are compared: the listed normalisations in order, then `delete_chars`
    deleted, on both sides. Inside another checker its `kind` may be left out."""

    kind: Literal["string"] = "string"
    normalize: list[Literal["strip", "lower", "collapse_whitespace"]] = ["strip"]
    delete_chars: str = ""

    def norm(self, s: str) -> str:
        for step in self.normalize:
            if step == "strip":
                s = s.strip()
            elif step == "lower":
                s = s.lower()
            else:
                s = " ".join(s.split())
        return s.translate({ord(c): None for c in self.delete_chars})

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` equals `gold` after normalisation (both strings)."""
        if not (isinstance(answer, str) and isinstance(gold, str)):
            return False
        return self.norm(answer) == self.norm(gold)


@CHECKERS.register
class StringChecker(StringNormaliser):
    """Equal strings after the listed normalisations, applied in order to both sides."""

    kind: Literal["string"]


@CHECKERS.register
class RegexChecker(BaseChecker):
    """The answer string matches a pattern: `pattern` if set, else the gold is the pattern.
    Patterns run on RE2, in linear time, and must compile there (a gold one when its item
    is built); an answer longer than `max_chars` does not match (`null`: no limit)."""

    kind: Literal["regex"]
    pattern: RegexPattern | None = None
    fullmatch: bool = True
    ignore_case: bool = False
    max_chars: int | None = Field(default=100_000, ge=1)

    def gold_problem(self, gold: Any) -> str | None:
        """Why an item's gold cannot be its pattern (None when it can, or is not used)."""
        if self.pattern is not None or not isinstance(gold, str):
            return None
        try:
            self._compiled(gold)
        except ValueError as e:
            return f"check regex uses the gold as its pattern: gold {gold!r}: {e}"
        return None

    def _compiled(self, pattern: str) -> Regex:
        return compile_task_regex(pattern, ("IGNORECASE",) if self.ignore_case else ())

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """Short strings read off the pattern (the checker's, else the gold) and off the
        answer schema's own `pattern`, kept where this checker says right (a pattern cannot
        always be inverted: vbw.task.regexample)."""
        pattern = self.pattern if self.pattern is not None else gold
        if not isinstance(pattern, str):
            return []
        flags = re.IGNORECASE if self.ignore_case else 0
        found = examples(pattern, flags)
        own = schema.get("pattern") if isinstance(schema, dict) else None
        if isinstance(own, str):
            found += examples(own)
        return [s for s in dict.fromkeys(found) if self.check(s, gold)][:CANDIDATES]

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` matches the pattern (the checker's, else the gold)."""
        pattern = self.pattern if self.pattern is not None else gold
        if not (isinstance(answer, str) and isinstance(pattern, str)):
            return False
        if self.max_chars is not None and len(answer) > self.max_chars:
            return False
        try:
            rx = self._compiled(pattern)
        except ValueError:  # a gold pattern RE2 refuses: refused when the item was built
            return False
        return rx.fullmatch(answer) if self.fullmatch else rx.search(answer) is not None


@CHECKERS.register
class MembershipChecker(BaseChecker):
    """The answer equals one element of the gold list. With `string`, a normaliser such as
    `{normalize: [strip, lower]}`, string elements are compared after normalising."""

    kind: Literal["membership"]
    answers_complete: ClassVar[bool] = True
    string: StringNormaliser | None = None

    @field_validator("string", mode="before")
    @classmethod
    def _normaliser_form(cls, v: Any) -> Any:
        if v is None or isinstance(v, (dict, StringNormaliser)):
            return v
        raise PydanticCustomError("string_normaliser",
                                  f"expected a string normaliser like {_NORMALISER_FORM}")

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """The gold's first values."""
        return list(gold[:CANDIDATES]) if isinstance(gold, list) else []

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` is one of the gold's values."""
        if not isinstance(gold, list):
            return False
        for g in gold:
            if self.string is not None and isinstance(g, str):
                if self.string.check(answer, g):
                    return True
            elif _same(answer, g):
                return True
        return False


@CHECKERS.register
class CallArgsChecker(BaseChecker):
    """Per-argument allowed-values match of a function call's arguments (BFCL style).
    `rules`: `simplified` (vbw's match, `delete_chars` deleted from strings) or
    `bfcl_official` (BFCL's AST checker for Python, docs/bfcl.md; `delete_chars` unused),
    where a gold that is a list of calls {name: allowed} (BFCL's parallel and multiple
    categories) is matched by a list of calls {name: arguments}, in any order."""

    kind: Literal["call_args"]
    answers_complete: ClassVar[bool] = True
    part_groups: ClassVar[tuple[str, ...]] = PARAMETER_TYPES
    rules: Literal["simplified", "bfcl_official"] = "simplified"
    delete_chars: str = " ,./-_*^"

    def gold_problem(self, gold: Any) -> str | None:
        """Why this checker cannot score an item's gold: `simplified` matches one call's
        arguments, so against a list of calls every answer would be wrong."""
        if self.rules == "simplified" and isinstance(gold, list):
            return ("task.check.rules=simplified matches one call's arguments, and this "
                    "gold is a list of calls (every answer would be scored wrong); use "
                    "task.check.rules=bfcl_official, the rule for lists of calls")
        return None

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """Per parameter its first allowed value (an optional one, whose list holds "",
        left out); allowed objects, also inside lists, are built the same way. A list of
        calls (bfcl_official) gives the list of those calls, then the same calls with their
        optional parameters left out (BFCL's gold may allow one the function does not
        declare, which BFCL rejects when given)."""
        if isinstance(gold, dict):
            return [_call_args_example(gold)]
        if self.rules == "bfcl_official" and isinstance(gold, list) and all(
                isinstance(c, dict) and c for c in gold):
            return [[{n: _call_args_example(a, optional) if isinstance(a, dict)
                      else _example_value(a) for n, a in list(c.items())[:1]} for c in gold]
                    for optional in (True, False)]
        return []

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether the call(s) in `answer` match the allowed values in `gold`."""
        if self.rules == "bfcl_official":
            if isinstance(gold, list):
                return calls_reason(answer, gold, schema) is None
            return official_reason(answer, gold, schema) is None
        properties = (schema or {}).get("properties", {})
        return self._match_object(answer, gold, properties)

    def parts(self, answer: Any, gold: Any, schema: Any = None) -> list[Part] | None:
        """Each gold parameter of one call, grouped by its declared JSON type (`other`:
        none, or several): right when the answer's value matches as `check` matches it
        (an optional one left out is right; a parameter the gold does not name makes the
        answer wrong, no parameter). A list of calls is not split."""
        if not isinstance(gold, dict):
            return None
        props = (schema or {}).get("properties", {}) if isinstance(schema, dict) else {}
        given = answer if isinstance(answer, dict) else None
        return [Part(param, param_group(props.get(param)), self._param_right(
            given, param, allowed, props)) for param, allowed in gold.items()]

    def _param_right(self, answer: dict[str, Any] | None, param: str, allowed: Any,
                     props: Any) -> bool:
        allowed = allowed if isinstance(allowed, list) else [allowed]
        if answer is None:
            return False
        if param not in answer:
            return "" in allowed
        if self.rules == "bfcl_official":
            return param in props and param_reason(answer[param], allowed,
                                                   props[param]) is None
        return any(self._match(answer[param], a) for a in allowed if a != "")

    def _match_object(self, answer: Any, gold: Any, properties: Any) -> bool:
        if not isinstance(answer, dict) or not isinstance(gold, dict):
            return False
        if any(k not in properties for k in answer):
            return False
        for param, allowed in gold.items():
            allowed = allowed if isinstance(allowed, list) else [allowed]
            if param not in answer:
                if "" not in allowed:
                    return False
                continue
            if not any(self._match(answer[param], a) for a in allowed if a != ""):
                return False
        return True

    def _match(self, value: Any, allowed: Any) -> bool:
        if isinstance(allowed, bool) or isinstance(value, bool):
            return isinstance(allowed, bool) and isinstance(value, bool) and value is allowed
        if isinstance(allowed, str):
            return isinstance(value, str) and self._norm(value) == self._norm(allowed)
        if is_number(allowed):
            return is_number(value) and as_float(value) == as_float(allowed)
        if isinstance(allowed, list):
            return (isinstance(value, list) and len(value) == len(allowed)
                    and all(self._match(v, a) for v, a in zip(value, allowed)))
        if isinstance(allowed, dict):
            return self._match_object(value, allowed, allowed)
        return value == allowed

    def _norm(self, s: str) -> str:
        return s.lower().translate({ord(c): None for c in self.delete_chars})


Checker = CHECKERS.union()
CHECKER_KINDS = CHECKERS.classes


def _call_args_example(gold: dict[str, Any], optional: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param, allowed in gold.items():
        allowed = allowed if isinstance(allowed, list) else [allowed]
        chosen = next((a for a in allowed if a != ""), None) \
            if optional or "" not in allowed else None
        if chosen is not None:  # else optional, and absent is right
            out[param] = _example_value(chosen)
    return out


def _example_value(allowed: Any) -> Any:
    if isinstance(allowed, dict):
        return _call_args_example(allowed)
    if isinstance(allowed, list):
        return [_example_value(a) for a in allowed]
    return allowed


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b
