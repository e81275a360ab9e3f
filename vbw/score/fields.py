"""Per-field rates and paired comparisons (report.json's `fields`), from the item states'
field codes (vbw.task.fields).

A field is scored over the items that have it (every item, for a task's own fields; the
items whose gold has a parameter of that type, for a checker's parts), and for the arms
that can state it. Its comparisons are the answer's pairs (vbw.score.metrics
comparison_pairs) among those arms, with the same verdict (Delta.effect). Each arm and
each comparison of a field draws from its own stream, keyed "FIELD: ARM" and
"FIELD: FROM -> TO" (docs/reference/scoring.md).
"""

from __future__ import annotations

import numpy as np

from vbw.score.bootstrap import key_rng, rate_ci
from vbw.score.pairs import comparison_key, comparison_pairs, paired_delta, role_of
from vbw.score.results import FieldArm, FieldComparison, FieldMetrics, Flips, Rate
from vbw.score.states import ItemStates
from vbw.task.fields import ABSENT, ALL_FIELDS, NOT_READ, RIGHT, all_fields


def field_key(field: str, key: str) -> str:
    """The key of a field's stream for an arm or a comparison key."""
    return f"{field}: {key}"


def named_codes(st: ItemStates) -> list[tuple[str, np.ndarray]]:
    """(field, codes (items, arms)) for each field of the task, then the derived
    ALL_FIELDS; [] when the task has no fields."""
    codes = st.field_codes
    if codes is None or not st.field_names:
        return []
    out = [(name, codes[:, :, f]) for f, name in enumerate(st.field_names)]
    return out + [(ALL_FIELDS, all_fields(codes))]


def field_metrics(st: ItemStates, seed: int, resamples: int) -> dict[str, FieldMetrics]:
    """Each field's metrics (see the module docstring); a field no scored item has is left
    out."""
    out: dict[str, FieldMetrics] = {}
    for name, codes in named_codes(st):
        rows = (codes != ABSENT).any(axis=1)
        if rows.any():
            out[name] = _field(st, name, codes[rows], st.valid[rows], seed, resamples)
    return out


def _field(st: ItemStates, name: str, codes: np.ndarray, valid: np.ndarray, seed: int,
           resamples: int) -> FieldMetrics:
    n = int(codes.shape[0])
    read = [j for j, a in enumerate(st.arms) if not (codes[:, j] == NOT_READ).any()]
    right = {j: codes[:, j] == RIGHT for j in read}
    wbv = {j: (valid[:, j] == 1) & ~right[j] for j in read if st.arms[j].has_contract}
    arms = {}
    for j in read:
        rng = key_rng(seed, field_key(name, st.arms[j].key))
        acc = Rate(rate=float(right[j].mean()), ci95=rate_ci(right[j], rng, resamples))
        wrong_valid = None if j not in wbv else Rate(
            rate=float(wbv[j].mean()), ci95=rate_ci(wbv[j], rng, resamples))
        arms[st.arms[j].key] = FieldArm(right=int(right[j].sum()), accuracy=acc,
                                        wrong_but_valid=wrong_valid)
    comparisons = []
    at = {st.arms[j]: j for j in read}
    for src, dst, kind in comparison_pairs(list(at)):
        i, j = at[src], at[dst]
        rng = key_rng(seed, field_key(name, comparison_key(src.key, dst.key)))
        deltas = {"accuracy": paired_delta(right[i], right[j], rng, resamples)}
        if i in wbv and j in wbv:
            deltas["wrong_but_valid"] = paired_delta(wbv[i], wbv[j], rng, resamples)
        flips = Flips(right_to_wrong=int((right[i] & ~right[j]).sum()),
                      wrong_to_right=int((~right[i] & right[j]).sum()))
        comparisons.append(FieldComparison(from_=src.key, to=dst.key, kind=kind,
                                           role=role_of(src, dst, kind), deltas=deltas,
                                           flips=flips))
    return FieldMetrics(n=n, arms=arms,
                        not_read=[a.key for j, a in enumerate(st.arms) if j not in read],
                        comparisons=comparisons)
