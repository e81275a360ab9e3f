"""The gold-shaped answer of one item under one schema, scored as a model's would be.

mode=check asks two questions of every schema: is an answer holding the gold scored right
(else the checker, coercion or json path cannot match the gold), and is it schema-valid
(else a constrained arm can never be right there). Each is asked of a real instance: the
checker's own candidates for the gold (`gold_answers`, vbw.task.check) placed at
`extract.json.path`, every other required property filled by vbw.task.instance, then
extracted, coerced, checked and validated exactly as scoring does.

How it works and why: docs/design.md, section vbw.task.goldshape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict

from vbw.task.base import search
from vbw.task.instance import Unbuildable, Unsatisfiable, at_path, minimal, with_value
from vbw.task.runner import Item, Task
from vbw.task.validity import Validators

SHOWN_CHARS = 160  # of a gold, answer or message in a one-line finding


class Example(BaseModel):
    """The evidence of a finding, from one concrete item."""

    model_config = ConfigDict(extra="forbid")
    item: str
    gold: Any
    answer: Any  # the built JSON answer (None: none could be placed)
    extracted: Any
    verdict: str

    def line(self) -> str:
        return (f"item {' '.join(self.item.split())}: gold {shown(self.gold)}, built answer "
                f"{shown(self.answer)}, extracted {shown(self.extracted)}, {self.verdict}")


class Judged(NamedTuple):
    outcome: Literal["ok", "wrong", "invalid", "unbuilt"]
    example: Example | None = None
    reason: str = ""  # why "unbuilt"


def shown(value: Any) -> str:
    """`value` as compact JSON, cut to SHOWN_CHARS (one line: JSON escapes newlines)."""
    try:
        s = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        s = repr(value)
    return s if len(s) <= SHOWN_CHARS else s[:SHOWN_CHARS] + "…"


def json_path(path: str) -> list[str] | None:
    """`extract.json.path` as property names (`@`: the root), or None when it is not a
    plain dotted path (no gold-shaped answer is built for it)."""
    if path == "@":
        return []
    parts = path.split(".")
    return parts if all(p.isidentifier() for p in parts) else None


def _why_invalid(schema: dict[str, Any], obj: Any) -> str:
    try:
        err = best_match(validator_for(schema)(schema).iter_errors(obj))
    except Exception:  # noqa: BLE001 - a message is evidence, not a verdict
        err = None
    if err is None:
        return "invalid"
    where = "/".join(str(p) for p in err.absolute_path)
    message = " ".join(err.message.split())
    if len(message) > SHOWN_CHARS:
        message = message[:SHOWN_CHARS] + "…"
    return f"{'at ' + where + ': ' if where else ''}{message}"


class Target(NamedTuple):
    """What a gold-shaped answer is built for: the task's answer, or one of its fields
    (vbw.task.spec.FieldSpec): where it sits, its checker, its gold and how it is read."""

    field: str | None  # None: the answer
    where: str  # the task field of its path, e.g. "extract.json.path", "fields.amount.path"
    path: str
    parts: list[str] | None  # the path as property names; None: not a plain dotted path
    checker: Any
    gold: Callable[[Item], Any]
    read: Callable[[Any], Any]  # the JSON object -> the coerced value scoring reads
    is_right: Callable[[Any, Item], bool]


def targets(task: Task) -> list[Target]:
    """The answer, then each of the task's fields."""
    path = task.spec.extract.json_.path
    out = [Target(None, "extract.json.path", path, json_path(path), task.spec.check,
                  lambda item: item.gold, task.json_answer,
                  lambda value, item: task.is_correct(value, item))]
    for name, f in task.spec.fields.items():
        out.append(Target(name, f"fields.{name}.path", f.path, json_path(f.path), f.check,
                          lambda item, name=name: item.field_gold[name],
                          lambda obj, f=f: None if obj is None else f.coerce.apply(
                              search(f.path, obj)),
                          lambda value, item, f=f, name=name: value is not None and
                          f.check.check(value, item.field_gold[name], None)))
    return out


def judge(task: Task, item: Item, schema: dict[str, Any], target: Target,
          validators: Validators) -> Judged:
    """The first candidate that is right and valid ("ok"), else the first one built that
    is right (else the first one built), with what is wrong with it (module docstring)."""
    checker, kind, parts = target.checker, target.checker.kind, target.parts or []
    where, gold = target.path, target.gold(item)
    try:
        leaf = at_path(schema, parts)
    except Unbuildable as e:
        return Judged("unbuilt", reason=f"the schema at {where!r} is not followed: {e}")
    candidates = checker.gold_answers(gold, leaf)
    if not candidates:
        return Judged("unbuilt", reason=f"check {kind} builds no answer for gold "
                                        f"{shown(gold)}")
    built, reason = [], ""
    try:
        for obj, extracted, right, valid in _built(target, item, schema, candidates,
                                                   validators):
            if isinstance(obj, Unbuildable):
                reason = str(obj)
                continue
            if right and valid:
                return Judged("ok")
            built.append((obj, extracted, right, valid))
    except Unsatisfiable as e:
        return Judged("invalid", Example(
            item=item.id, gold=gold, answer=None, extracted=None,
            verdict=f"no value is valid at {target.where} {where!r}: {e}"))
    if not built:
        return Judged("unbuilt", reason=f"no instance of the schema was built: {reason}")
    obj, extracted, right, valid = next((b for b in built if b[2]), built[0])  # right first
    if not right:
        said = "valid under the schema" if valid else f"also invalid: {_why_invalid(schema, obj)}"
        return Judged("wrong", Example(item=item.id, gold=gold, answer=obj,
                                       extracted=extracted,
                                       verdict=f"checker {kind} said wrong ({said})"))
    return _invalid(target, item, schema, parts, leaf, obj, extracted, validators)


def _built(target: Target, item: Item, schema: dict[str, Any], candidates: list[Any],
           validators: Validators) -> Iterator[tuple[Any, Any, bool, bool]]:
    """Per candidate: the instance built around it (an Unbuildable in its place when
    none could be), what scoring extracts from it, right, valid. Raises Unsatisfiable
    when no value is valid at the target's path."""
    for answer in candidates:
        try:
            obj = with_value(schema, target.parts or [], answer)
        except Unsatisfiable:
            raise
        except Unbuildable as e:
            yield e, None, False, False
            continue
        extracted = target.read(obj)
        yield obj, extracted, target.is_right(extracted, item), validators.is_valid(schema, obj)


def gold_instance(task: Task, item: Item, schema: dict[str, Any],
                  validators: Validators) -> Any:
    """The item's gold-shaped answer under `schema`: the first instance built around the
    checker's candidates for its gold that is scored right and is valid (what a model
    that knows the answer would write; mode=conformance walks the engines over it), or
    None when there is none (mode=check says why).

    Args:
        task: the task (its answer's path, checker and coercion).
        item: the item (its gold).
        schema: one of the item's schemas.
        validators: validity as scoring decides it.
    Returns:
        The JSON value, or None.
    """
    target = targets(task)[0]
    if target.parts is None:
        return None
    try:
        leaf = at_path(schema, target.parts)
        candidates = target.checker.gold_answers(target.gold(item), leaf)
        for obj, _, right, valid in _built(target, item, schema, candidates, validators):
            if right and valid and not isinstance(obj, Unbuildable):
                return obj
    except (Unbuildable, Unsatisfiable):
        return None
    return None


def _invalid(target: Target, item: Item, schema: dict[str, Any], parts: list[str], leaf: Any,
             obj: Any, extracted: Any, validators: Validators) -> Judged:
    """Right but invalid: claimed only when the control validates (module docstring)."""
    kind = target.checker.kind
    verdict = (f"checker {kind} said right, the schema rejects it: "
               f"{_why_invalid(schema, obj)}")
    example = Example(item=item.id, gold=target.gold(item), answer=obj, extracted=extracted,
                      verdict=verdict)
    if not target.checker.answers_complete:
        return Judged("unbuilt", reason=f"no answer built is both right by check {kind} and "
                                        f"valid, e.g. {example.line()}")
    try:
        control = with_value(schema, parts, minimal(leaf, schema))
    except Unsatisfiable as e:
        return Judged("invalid", example.model_copy(update={
            "verdict": f"{verdict} (no value is valid at that path: {e})"}))
    except Unbuildable as e:
        return Judged("unbuilt", reason=f"no valid instance of the schema was built: {e}")
    if not validators.is_valid(schema, control):
        return Judged("unbuilt", reason="no valid instance of the schema was built "
                                        f"({shown(control)} is not valid)")
    return Judged("invalid", example)
