"""Per-item, per-arm states: validity (valid / invalid / n/a) and correctness (right /
wrong), computed from the replay texts and the task alone.

Validity is vbw.task.validity's verdict (jsonschema, with integers of any length).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from vbw.task.arms import Arm
from vbw.task.extract import Extracted
from vbw.task.fields import FieldRow
from vbw.task.runner import Item, Task
from vbw.task.validity import Validators


class ItemStates(BaseModel):
    """Arrays aligned on (item, arm): valid is 1/0, or -1 where the arm has no contract.
    A figure a Tally field adds (vbw.score.tally, `states=True`) is an extra field of
    its name."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True, extra="allow")
    ids: list[str]
    arms: list[Arm]  # typed; a key string appears only in report.json and the ledger
    valid: Any  # np.ndarray[int8] shape (n_items, n_arms)
    right: Any  # np.ndarray[bool] shape (n_items, n_arms)
    excluded: list[str]
    excluded_reasons: dict[str, str]
    # np.ndarray[int32] (n_items, n_arms, 4): interventions per item and arm
    # (vbw.score.interventions); None: no record had any
    events: Any = None
    # np.ndarray[int8] (n_items, n_arms, n_fields): per field a code of
    # vbw.task.fields.FIELD_CODES; None: the task has no fields
    field_codes: Any = None
    field_names: list[str] = []
    field_label: str = ""  # what the fields are (vbw.task.fields.FieldReader.label)

    def state(self, i: int, j: int) -> str:
        return _STATES[int(self.valid[i, j]), bool(self.right[i, j])]

    def codes(self) -> np.ndarray:
        """Each (item, arm)'s state as an index into STATE_NAMES (one array operation,
        where `state` per cell costs a Python call: 600,000 of them at 100,000 x 6)."""
        return (np.asarray(self.valid, dtype=np.intp) + 1) * 2 \
            + np.asarray(self.right, dtype=np.intp)


# One string per state, shared by every cell of the ledger (100,000 items x 6 arms would
# otherwise hold 600,000 copies of six strings).
_STATES = {(v, r): f"{'n/a' if v < 0 else ('valid' if v else 'invalid')}/"
                   f"{'right' if r else 'wrong'}" for v in (-1, 0, 1) for r in (False, True)}
# The same strings by ItemStates.codes(): (valid + 1) * 2 + right.
STATE_NAMES = [_STATES[v, r] for v in (-1, 0, 1) for r in (False, True)]


def no_arm_message(path: str, item_id: str, arm: str, has: Iterable[str]) -> str:
    return f"{path}: item {item_id} has no arm {arm!r} (it has: {', '.join(has)})"


_plan: list[Any] = [None, []]  # the last arms seen (a copy), and their (arm, key, schema)


def _arm_plan(arms: list[Arm]) -> list[tuple[Arm, str, str | None]]:
    """Each arm with its key and contract schema (None: no contract), worked out once per
    list of arms rather than per item (a key is built anew on each look-up)."""
    if _plan[0] != arms:
        _plan[:] = [list(arms), [(a, a.key, a.schema if a.has_contract else None)
                                 for a in arms]]
    return _plan[1]


def arm_states(task: Task, item: Item, texts: Mapping[str, str | None], arms: list[Arm],
               validators: Validators, kept: list[Extracted] | None = None,
               fields: list[FieldRow] | None = None,
               answers: list[Any] | None = None) -> tuple[list[int], list[bool]]:
    """(validity row, correctness row) of one item over `arms`, from each arm's text: per
    arm, Task.extract's object and answer (by Task.reader), the object's validity against the arm's
    schema, and Task.is_correct. `kept`: each arm's extraction is added to it, with its
    span (for the reports: vbw.score.shown). `fields`: each arm's FieldRow is added to it
    (the task's fields, vbw.task.fields). `answers`: each arm's extracted answer is added
    to it (None: none; answers.csv, vbw.score.answers)."""
    vrow: list[int] = []
    rrow: list[bool] = []
    schemas, read, is_correct = item.schemas, task.reader, task.is_correct
    is_valid, spans = validators.is_valid, kept is not None
    for arm, key, schema in _arm_plan(arms):
        text, free = texts[key], arm.kind == "unconstrained"
        got = read(text, item, free, spans)
        obj, plain, answer, _ = got
        if spans:
            kept.append(Extracted(*got))  # type: ignore[union-attr]
        if schema is not None:
            vrow.append(int(obj is not None and is_valid(schemas[schema], obj, plain)))
        else:
            vrow.append(-1)
        rrow.append(answer is not None and is_correct(answer, item))
        if answers is not None:
            answers.append(answer)
        if fields is not None:
            fields.append(task.fields.row(obj, text, answer, item, free))
    return vrow, rrow
