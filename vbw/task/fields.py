"""Per-field scoring: which fields of an answer an arm got right, item by item.

A task's fields are the ones it names (`fields:`, vbw.task.spec.FieldSpec), or, for a task
that names none, the groups its checker splits an answer into (BaseChecker.parts: a call's
parameters by declared type). Each (item, arm, field) gets one code of FIELD_CODES. The
derived "all fields" (every field the item has, right) is worked out from the codes by
`all_fields`, never read twice.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from vbw.task.base import search
from vbw.task.extract import chain_value
from vbw.task.kinds import Part

RIGHT, WRONG, NOT_READ, ABSENT = 1, 0, -1, -2
# what each code means, in report.json's words
FIELD_CODES = {RIGHT: "right", WRONG: "wrong",
               NOT_READ: "n/a (the arm's text has no way to state it: no free-text steps)",
               ABSENT: "absent (the item's gold has no such part)"}
ALL_FIELDS = "all fields"  # the derived field's name (a task's own cannot hold a space)


class FieldRow(NamedTuple):
    """One arm's fields on one item: a code per field (FIELD_CODES), and what was read:
    per named field its value (None: none), or the checker's parts."""

    codes: list[int]
    values: list[Any] | list[Part]


class FieldReader:
    """Reads and checks the fields of one task's answers (see the module docstring)."""

    def __init__(self, spec: Any) -> None:
        """`spec`: the task's TaskSpec."""
        self._named = list(spec.fields.items())
        self._check = spec.check
        groups = () if self._named else type(spec.check).part_groups
        self.names: list[str] = [n for n, _ in self._named] or list(groups)
        self.label = "the task's fields" if self._named else \
            "the answer's parameters by declared type (from the checker)"
        self._answer_schema = spec.answer_schema

    def __bool__(self) -> bool:
        return bool(self.names)

    def row(self, obj: Any, text: str | None, answer: Any, item: Any,
            free: bool) -> FieldRow:
        """The fields of one arm: `obj`, its text's first JSON object (None: none);
        `text` (a free-text arm's, read by each field's `free` steps); `answer`, the arm's
        coerced answer (what the checker's parts are of)."""
        if self._named:
            return self._named_row(obj, text, item, free)
        parts = self._check.parts(answer, item.gold, item.schemas[self._answer_schema])
        return FieldRow(_group_codes(parts or [], self.names), parts or [])

    def _named_row(self, obj: Any, text: str | None, item: Any, free: bool) -> FieldRow:
        codes: list[int] = []
        values: list[Any] = []
        for name, f in self._named:
            if free and not f.free:
                codes.append(NOT_READ)
                values.append(None)
                continue
            value = _free_value(f, text, item.fields) if free else \
                (None if obj is None else f.coerce.apply(search(f.path, obj)))
            values.append(value)
            codes.append(RIGHT if value is not None and f.check.check(
                value, item.field_gold[name], None) else WRONG)
        return FieldRow(codes, values)


def _free_value(f: Any, text: str | None, fields: dict[str, Any]) -> Any:
    """The field's value in a free text: the first of its steps whose candidate coerces."""
    return None if text is None else chain_value(f.free, text, fields, f.coerce)


def _group_codes(parts: list[Part], groups: list[str]) -> list[int]:
    """Per group: RIGHT when every part of it is right, ABSENT when the gold has none."""
    out = {g: ABSENT for g in groups}
    for p in parts:
        if out[p.group] != WRONG:
            out[p.group] = RIGHT if p.right else WRONG
    return list(out.values())


def all_fields(codes: np.ndarray) -> np.ndarray:
    """The derived field from per-field codes (..., F): RIGHT when every field the item has
    is right; NOT_READ when the arm cannot state one of them; ABSENT when the item has
    none; else WRONG."""
    present = codes != ABSENT
    out = np.where((codes == RIGHT) | ~present, RIGHT, WRONG).min(axis=-1)
    out = np.where((codes == NOT_READ).any(axis=-1), NOT_READ, out)
    return np.where(present.any(axis=-1), out, ABSENT).astype(np.int8)

