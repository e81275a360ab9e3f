"""Per-item, per-arm states: validity (valid / invalid / n/a) and correctness (right /
wrong), computed from the replay texts and the task alone.

Validity is vbw.task.validity's verdict (jsonschema, with integers of any length).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from vbw.errors import ReplayError
from vbw.replay.format import Replay
from vbw.score.interventions import empty_rows, event_row
from vbw.score.landing import answer_steps
from vbw.task.arms import Arm
from vbw.task.jsonscan import first_json_object_plain
from vbw.task.runner import Item, Task
from vbw.task.validity import Validators


class ItemStates(BaseModel):
    """Arrays aligned on (item, arm): valid is 1/0, or -1 where the arm has no contract."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    ids: list[str]
    arms: list[Arm]  # typed; a key string appears only in report.json and the ledger
    valid: Any  # np.ndarray[int8] shape (n_items, n_arms)
    right: Any  # np.ndarray[bool] shape (n_items, n_arms)
    excluded: list[str]
    excluded_reasons: dict[str, str]
    # np.ndarray[int32] (n_items, n_arms, 4): interventions per item and arm
    # (vbw.score.interventions); None: no record had any
    events: Any = None

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
               validators: Validators) -> tuple[list[int], list[bool]]:
    """(validity row, correctness row) of one item over `arms`, from each arm's text: per
    arm, Task.answer's (object, answer), the object's validity against the arm's schema,
    and Task.is_correct. Those two are inlined here, their attribute look-ups done once
    per item (this loop runs 600,000 times for 100,000 items of 6 arms);
    tests/score/test_states.py checks that it gives what they give."""
    vrow: list[int] = []
    rrow: list[bool] = []
    schemas, spec, gold = item.schemas, task.spec, item.gold
    coerce, at_path, check = spec.coerce.apply, spec.extract.json_.apply, spec.check.check
    answer_schema, is_valid = schemas[spec.answer_schema], validators.is_valid
    for arm, key, schema in _arm_plan(arms):
        text, known = texts[key], None
        if text is None:
            obj = answer = None
        elif arm.kind == "unconstrained":
            obj, answer = None, task.free_answer(text, item)
        else:
            obj, known = first_json_object_plain(text)
            answer = None if obj is None else coerce(at_path(obj))
        if schema is not None:
            vrow.append(int(obj is not None and is_valid(schemas[schema], obj, known)))
        else:
            vrow.append(-1)
        rrow.append(answer is not None and check(answer, gold, answer_schema))
    return vrow, rrow


def score_items(task: Task, items: list[Item], replay: Replay, arms: list[Arm]) -> ItemStates:
    """States for every item of `items` that the replay holds, in item order."""
    by_id = {r.id: r for r in replay.records}
    known = {it.id for it in items}
    stray = [r.id for r in replay.records if r.id not in known]
    if stray and len(stray) == len(replay.records):
        raise ReplayError(f"{replay.path}: no item id belongs to task {task.name} "
                          f"(first: {stray[0]!r})")
    validators = Validators()
    ids: list[str] = []
    excluded: list[str] = []
    reasons: dict[str, str] = {}
    valid_rows: list[list[int]] = []
    right_rows: list[list[bool]] = []
    event_rows: list[np.ndarray] = []
    steps = answer_steps(task.spec.extract.json_.path)
    for item in items:
        rec = by_id.get(item.id)
        if rec is None:
            continue
        if rec.unsupported:
            excluded.append(item.id)
            reasons[item.id] = rec.unsupported
            continue
        missing_arm = next((arm.key for arm in arms if arm.key not in rec.arms), None)
        if missing_arm is not None:
            raise ReplayError(no_arm_message(replay.path, item.id, missing_arm, rec.arms))
        texts = {k: a.text for k, a in rec.arms.items()}
        vrow, rrow = arm_states(task, item, texts, arms, validators)
        spans = {k: [(e.char, len(e.forced)) for e in a.interventions]
                 for k, a in rec.arms.items() if a.interventions is not None}
        event_rows.append(event_row(texts, spans, arms, steps))
        ids.append(item.id)
        valid_rows.append(vrow)
        right_rows.append(rrow)
    shape = (len(ids), len(arms))
    valid = np.array(valid_rows, dtype=np.int8).reshape(shape)
    right = np.array(right_rows, dtype=bool).reshape(shape)
    events = np.array(event_rows).reshape(shape + (4,)) if event_rows \
        else empty_rows(*shape)
    return ItemStates(ids=ids, arms=list(arms), valid=valid, right=right,
                      excluded=excluded, excluded_reasons=reasons, events=events)
