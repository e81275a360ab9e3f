"""The constraint's interventions per enforced arm, as report.json summarises them.

How it works and why: docs/design.md, section vbw.score.interventions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vbw.score.landing import Step, classify, counts
from vbw.score.results import (ArmInterventions, Comparison, FlipInterventions,
                             InterventionCounts)
from vbw.task.arms import Arm

EVENT_COLUMNS = ("events", "in_value", "in_key", "in_answer")
NOT_RECORDED = -1
OUTCOMES = ("right", "wrong_but_valid", "invalid")  # right: valid and right; invalid: any


def empty_rows(n: int, arms: int) -> np.ndarray:
    """(item, arm, EVENT_COLUMNS) counts, all not recorded."""
    return np.full((n, arms, len(EVENT_COLUMNS)), NOT_RECORDED, dtype=np.int32)


def event_row(texts: Mapping[str, str | None],
              spans: Mapping[str, Sequence[tuple[int, int]]] | None, arms: list[Arm],
              steps: tuple[Step, ...] | None) -> np.ndarray:
    """One item's counts over `arms`: only enforced arms whose record has the field."""
    row = np.full((len(arms), len(EVENT_COLUMNS)), NOT_RECORDED, dtype=np.int32)
    if not spans:
        return row
    for j, arm in enumerate(arms):
        events = spans.get(arm.key)
        if arm.enforced and events is not None:
            row[j] = counts(classify(texts.get(arm.key), events, steps))
    return row


def _counts(rows: np.ndarray) -> InterventionCounts:
    """The counts over items `rows` (each recorded): shape (k, EVENT_COLUMNS)."""
    k = len(rows)
    total = int(rows[:, 0].sum()) if k else 0
    in_value = int(rows[:, 1].sum()) if k else 0
    known = not k or bool((rows[:, 3] >= 0).all())
    in_answer = int(rows[:, 3].sum()) if k and known else (0 if known else None)
    answer_items = int((rows[:, 3] > 0).sum()) if k and known else (0 if known else None)
    return InterventionCounts(
        items=k, with_interventions=int((rows[:, 0] > 0).sum()) if k else 0,
        interventions=total, per_item=total / k if k else 0.0, in_value=in_value,
        in_answer=in_answer, answer_items=answer_items,
        value_share=in_value / total if total else None,
        answer_share=in_answer / total if total and in_answer is not None else None)


def _flips(c: Comparison, rows: np.ndarray, right: np.ndarray, src: int,
           dst: int) -> FlipInterventions:
    flipped = right[:, src] & ~right[:, dst]
    r = rows[flipped, dst]
    recorded = r[:, 0] >= 0
    some = recorded & (r[:, 0] > 0)
    located = bool((r[recorded, 3] >= 0).all())
    answer = some & (r[:, 3] > 0)
    structure = some & (r[:, 1] == 0) & (r[:, 2] == 0)
    return FlipInterventions(
        from_=c.from_, to=c.to, right_to_wrong=int(flipped.sum()),
        answer_value=int(answer.sum()) if located else None,
        structure_only=int(structure.sum()), elsewhere=int((some & ~answer & ~structure).sum()),
        none=int((recorded & (r[:, 0] == 0)).sum()), not_recorded=int((~recorded).sum()))


def summarise(events: np.ndarray | None, arms: list[Arm], valid: np.ndarray,
              right: np.ndarray, comparisons: list[Comparison]) -> dict[str, ArmInterventions]:
    """report.json's `interventions`: per enforced arm (see the module docstring)."""
    n = len(valid)
    if events is None:
        events = empty_rows(n, len(arms))
    out = {}
    for j, arm in enumerate(arms):
        if not arm.enforced:
            continue
        rows = events[:, j]
        recorded = rows[:, 0] >= 0
        if not recorded.any():
            out[arm.key] = ArmInterventions(recorded=False, not_recorded=n)
            continue
        ok, good = valid[:, j] == 1, right[:, j]
        groups = {"right": ok & good, "wrong_but_valid": ok & ~good, "invalid": ~ok}
        flips = [_flips(c, events, right, arms.index(_arm(arms, c.from_)), j)
                 for c in comparisons if c.kind == "headline" and c.to == arm.key]
        out[arm.key] = ArmInterventions(
            recorded=True, not_recorded=int((~recorded).sum()), all=_counts(rows[recorded]),
            by_outcome={k: _counts(rows[recorded & g]) for k, g in groups.items()},
            flips=flips)
    return out


def _arm(arms: list[Arm], key: str) -> Arm:
    return next(a for a in arms if a.key == key)
