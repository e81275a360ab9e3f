"""Answer extraction: a vocabulary of steps that turn model text into a candidate (open to
installed packages: entry-point group vbw.extractors).

Free text goes through an ordered chain of steps; each step yields a raw candidate (or
None), the task's coercion turns it into an answer, and the first step whose candidate
coerces to a non-None answer wins. JSON arms read the first JSON object in the text and
take a JMESPath into it (vbw.task.jsontext.scan finds that object in linear time). The step
vocabulary is the STEPS registry: a class registers itself, and `FreeStep` is built from it.

How it works and why: docs/design.md, section vbw.task.extract.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal, NamedTuple

from pydantic import Field, model_validator

from vbw.task.base import JMESPathExpr, RegexPattern, StrictModel, search
from vbw.task.coerce import last_number
from vbw.task.jsontext.scan import first_json_object  # noqa: F401  (re-exported: vbw.task)
from vbw.task.regex import Regex, compile_task_regex
from vbw.task.kinds import BaseStep
from vbw.task.registry import Registry

STEPS: Registry[StrictModel] = Registry("extract step", group="vbw.extractors")


class Extracted(NamedTuple):
    """What Task.extract reads of one arm's text."""

    obj: dict[str, Any] | None  # the first JSON object (arms other than unconstrained)
    plain: bool | None          # whether `obj` is plain (vbw.task.validity); None: not known
    answer: Any                 # the extracted, coerced answer; None: none
    span: tuple[int, int] | None = None  # where it was read (with `spans`), if known


NOTHING = Extracted(None, None, None)
MAX_CHARS = 100_000       # default text a regex step reads (its head or tail)
MAX_CALL_CHARS = 100_000  # a longer candidate call is not parsed: no answer


@STEPS.register
class RegexStep(BaseStep):
    """A regex match; `match` picks the first or last occurrence, `group` the capture.

    The pattern runs on RE2 (vbw.task.regex). The step reads the first `max_chars`
    characters of the text (match: first) or the last (match: last), as if the text were
    cut there; `max_chars: null` reads all of it. Each search is linear in what it reads;
    `match: last` searches once per match, so the bound also caps patterns that look far
    past each short match (`\\d+x|\\d`: quadratic in what is read)."""

    kind: Literal["regex"]
    pattern: RegexPattern
    group: int = Field(default=0, ge=0)
    match: Literal["first", "last"] = "last"
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = []
    # How much text is read, not what is generated: kept out of the canonical dump, so a
    # gold extraction step leaves the replay hash as it was before this field existed.
    max_chars: int | None = Field(default=MAX_CHARS, ge=1, exclude=True)

    @model_validator(mode="after")
    def _group_exists(self) -> "RegexStep":
        groups = self._compiled().groups
        if self.group > groups:  # would silently read as "no match" on every text
            raise ValueError(f"group {self.group} does not exist: the pattern "
                             f"{self.pattern!r} has {groups} group(s)")
        return self

    def _compiled(self) -> Regex:
        return compile_task_regex(self.pattern, tuple(self.flags))

    def span(self, text: str) -> tuple[int, int] | None:
        """Where in `text` the candidate that apply() returns lies (also the HTML report's
        highlight); None when there is none (no match, or the group did not take part)."""
        rx = self._compiled()
        offset = 0
        if self.max_chars is not None and len(text) > self.max_chars:
            offset = 0 if self.match == "first" else len(text) - self.max_chars
            text = text[offset:offset + self.max_chars]
        spans = rx.search(text) if self.match == "first" else rx.last(text)
        if spans is None or spans[self.group][0] < 0:
            return None
        start, end = spans[self.group]
        return offset + start, offset + end

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        where = self.span(text)
        return None if where is None else text[where[0]:where[1]]


@STEPS.register
class BoxedStep(BaseStep):
    r"""The content of the LAST `\boxed{...}` (no nested braces); earlier boxes are not tried."""

    kind: Literal["boxed"]

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        return _BOXED.apply(text, fields)

    def span(self, text: str) -> tuple[int, int] | None:
        return _BOXED.span(text)


@STEPS.register
class LastNumberStep(BaseStep):
    """The whole text, for a number coercion to take its last number from."""

    kind: Literal["last_number"]

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        return last_number(text)


@STEPS.register
class PythonCallStep(BaseStep):
    """Parse (never evaluate) the first Python-syntax call in the text into an arguments dict.

    Positional arguments map to the parameter names found at `params` (a JMESPath into the
    item's fields giving the parameters object, whose keys are in declared order); extra
    positionals are dropped; keyword arguments are added on top; values must be literals.
    A call longer than MAX_CALL_CHARS is not parsed (no answer): parsing is not linear.
    """

    kind: Literal["python_call"]
    params: JMESPathExpr

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        source = call_source(text)
        if source is None:
            return None
        try:
            node = ast.parse(source, mode="eval").body
            if not isinstance(node, ast.Call):
                return None
            names = list(search(self.params, fields) or {})
            args: dict[str, Any] = {}
            for name, arg in zip(names, node.args):
                args[name] = ast.literal_eval(arg)
            for kw in node.keywords:
                if kw.arg is None:
                    return None
                args[kw.arg] = ast.literal_eval(kw.value)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            return None
        return args



@STEPS.register
class PythonCallsStep(BaseStep):
    """Parse (never evaluate) several Python-syntax calls into a list of calls
    `{name: arguments}` (BFCL's form), from `[f(a=1), g(b=2)]`, `f(a=1), g(b=2)` or one
    call a line: the text from the first call to the last `)`, read as a list. Each call's
    name is its dotted name; its positional arguments map to the parameter names of the
    function of that name in the list at `functions` (a JMESPath into the item's fields;
    each function's parameters object at `params` inside it), extra positionals dropped;
    keyword arguments are added on top; values must be literals. A line break between
    a `)` and a name separates two calls. Anything else in that span (not a call, a call of no plain name, a non-literal value) gives no answer. At
    most MAX_CALL_CHARS are parsed."""

    kind: Literal["python_calls"]
    functions: JMESPathExpr
    params: JMESPathExpr = "parameters.properties"

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        declared = search(self.functions, fields)
        names: dict[str, list[str]] = {}
        for fn in declared if isinstance(declared, list) else []:
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names[fn["name"]] = list(search(self.params, fn) or {})
        source = call_source(_CALL_PER_LINE.sub("), ", text))
        if source is None:
            return None
        try:
            node = ast.parse(f"[{source}]", mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        return _calls(node, names)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _calls(node: ast.expr, names: dict[str, list[str]]) -> list[dict[str, Any]] | None:
    """The calls of a parsed list, or None if any element is not a literal call."""
    if not isinstance(node, ast.List) or not node.elts:
        return None
    out = []
    try:
        for call in node.elts:
            name = _dotted(call.func) if isinstance(call, ast.Call) else None
            if name is None:
                return None
            args = {p: ast.literal_eval(a) for p, a in zip(names.get(name, []), call.args)}
            for kw in call.keywords:
                if kw.arg is None:
                    return None
                args[kw.arg] = ast.literal_eval(kw.value)
            out.append({name: args})
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    return out


FreeStep = STEPS.union()
STEP_KINDS = STEPS.classes


class JsonExtract(StrictModel):
    """The answer inside the first JSON object: a JMESPath (`@` is the object itself)."""

    path: JMESPathExpr = "@"

    def apply(self, obj: Any) -> Any:
        if obj is None:
            return None
        return search(self.path, obj)


def chain_value(steps: list[Any], text: str, fields: dict[str, Any], coerce: Any) -> Any:
    """The value of an ordered chain of steps over `text`: the first candidate that
    `coerce` (a coercion) turns into a value; None when no step gives one."""
    for step in steps:
        candidate = step.apply(text, fields)
        if candidate is not None:
            value = coerce.apply(candidate)
            if value is not None:
                return value
    return None


def call_source(text: str) -> str | None:
    """What `[\\w.]+\\s*\\(.*\\)` (greedy) first matches in the text with newlines made
    spaces, found in linear time: from the first name run followed by `(` to the last `)`
    after it. None if there is none, or if it is longer than MAX_CALL_CHARS."""
    flat = text.replace("\n", " ")
    m = _CALL_START.search(flat)
    if m is None:
        return None
    close = flat.rfind(")")
    if close < m.end() or close + 1 - m.start() > MAX_CALL_CHARS:
        return None
    return flat[m.start():close + 1]


_BOXED = RegexStep(kind="regex", pattern=r"\\boxed\{([^{}]*)\}", group=1, max_chars=None)
# A name run starts where the previous character cannot belong to it, so no start inside a
# run is tried again (the old pattern retried every one: quadratic on long runs). Giving
# back part of a run or of the spaces leaves a name or space character where `(` must be,
# so each start fails or succeeds in time linear in what it read: no possessive needed.
_CALL_START = re.compile(r"(?<![\w.])[\w.]+\s*\(")
# A line break after a `)` and before a name separates two calls (one call a line); the
# whitespace after each `)` is read once, so the substitution is linear.
_CALL_PER_LINE = re.compile(r"\)[ \t]*\n\s*(?=[A-Za-z_])")
