"""Per-item, per-arm states: validity (valid / invalid / n/a) and correctness (right /
wrong), computed from the replay texts and the task alone.

Validity is vbw.task.validity's verdict (jsonschema, with integers of any length).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from vbw.errors import ReplayError
from vbw.replay.format import Replay
from vbw.task.arms import Arm
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

    def state(self, i: int, j: int) -> str:
        v = int(self.valid[i, j])
        return f"{'n/a' if v < 0 else ('valid' if v else 'invalid')}/" \
               f"{'right' if self.right[i, j] else 'wrong'}"


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
    for item in items:
        rec = by_id.get(item.id)
        if rec is None:
            continue
        if rec.unsupported:
            excluded.append(item.id)
            reasons[item.id] = rec.unsupported
            continue
        vrow: list[int] = []
        rrow: list[bool] = []
        for arm in arms:
            a = rec.arms.get(arm.key)
            if a is None:
                raise ReplayError(f"{replay.path}: item {item.id} has no arm {arm.key!r} "
                                  f"(it has: {', '.join(rec.arms)})")
            obj, answer = task.answer(a.text, item, arm)
            if arm.has_contract:
                vrow.append(int(obj is not None and
                                validators.is_valid(item.schemas[arm.schema], obj)))
            else:
                vrow.append(-1)
            rrow.append(task.is_correct(answer, item))
        ids.append(item.id)
        valid_rows.append(vrow)
        right_rows.append(rrow)
    shape = (len(ids), len(arms))
    valid = np.array(valid_rows, dtype=np.int8).reshape(shape)
    right = np.array(right_rows, dtype=bool).reshape(shape)
    return ItemStates(ids=ids, arms=list(arms), valid=valid, right=right,
                      excluded=excluded, excluded_reasons=reasons)
