"""Rates over ALL scored items and paired comparisons, from the item-state arrays."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from vbw.score.bootstrap import key_rng, rate_ci
from vbw.score.interventions import summarise
from vbw.score.results import (ArmMetrics, Comparison, Excluded, Flips, Missing, Quadrant,
                             Rate, Report)
from vbw.score.fields import field_metrics
from vbw.score.pairs import comparison_key, comparison_pairs, paired_delta, role_of
from vbw.score.states import STATE_NAMES, ItemStates
from vbw.score.samples import sampled_figures
from vbw.score.cost import summarise_cost
from vbw.score.tax import summarise_tax
from vbw.task.arms import Arm

EXCLUDED_REASON = "the decoding backend could not compile the schema"


def metric_columns(st: ItemStates, j: int) -> dict[str, np.ndarray]:
    """0/1 vectors per metric for arm column j, in the order their CIs are drawn from the
    arm's stream; validity metrics only for contract arms."""
    right = st.right[:, j]
    if not st.arms[j].has_contract:
        return {"answer_accuracy": right}
    valid = st.valid[:, j] == 1
    return {"schema_validity": valid, "answer_accuracy": right,
            "wrong_but_valid": valid & ~right}


def arm_metrics(st: ItemStates, arm: Arm, rng: np.random.Generator,
                resamples: int) -> ArmMetrics:
    """One arm's rates and quadrant; rng is that arm's own stream (see key_rng)."""
    n = len(st.ids)
    cols = metric_columns(st, st.arms.index(arm))
    rates = {m: Rate(rate=float(v.mean()) if n else 0.0, ci95=rate_ci(v, rng, resamples))
             for m, v in cols.items()}
    quadrant = None
    if "schema_validity" in cols:
        valid, right = cols["schema_validity"], cols["answer_accuracy"]
        quadrant = Quadrant(valid_right=int((valid & right).sum()),
                            valid_wrong=int((valid & ~right).sum()),
                            invalid_right=int((~valid & right).sum()),
                            invalid_wrong=int((~valid & ~right).sum()))
    return ArmMetrics(n=n, schema_validity=rates.get("schema_validity"),
                      answer_accuracy=rates["answer_accuracy"],
                      wrong_but_valid=rates.get("wrong_but_valid"), quadrant=quadrant)


def compare(st: ItemStates, src: Arm, dst: Arm, kind: str, rng: np.random.Generator,
            resamples: int) -> Comparison:
    """One paired comparison; rng is its own stream (see key_rng)."""
    i, j = st.arms.index(src), st.arms.index(dst)
    a_cols, b_cols = metric_columns(st, i), metric_columns(st, j)
    deltas = {m: paired_delta(a_cols[m], b_cols[m], rng, resamples)
              for m in a_cols if m in b_cols}
    transitions = _transitions(st.codes(), i, j)
    ra, rb = st.right[:, i], st.right[:, j]
    flips = Flips(right_to_wrong=int((ra & ~rb).sum()), wrong_to_right=int((~ra & rb).sum()))
    return Comparison(from_=src.key, to=dst.key, n=len(st.ids), role=role_of(src, dst, kind),
                      kind=kind,
                      deltas=deltas,
                      transitions=transitions, flips=flips)


def _transitions(codes: np.ndarray, i: int, j: int) -> dict[str, int]:
    """Items per (state in arm i -> state in arm j), in the order each first occurs."""
    pair = codes[:, i] * len(STATE_NAMES) + codes[:, j]
    kinds, first = np.unique(pair, return_index=True)
    counts = np.bincount(pair, minlength=len(STATE_NAMES) ** 2)
    return {f"{STATE_NAMES[k // len(STATE_NAMES)]} -> {STATE_NAMES[k % len(STATE_NAMES)]}":
            int(counts[k]) for k in kinds[np.argsort(first)].tolist()}


def ledger_rows(st: ItemStates) -> list[dict[str, str]]:
    """report.json's ledger: per item its id and each arm's state (shared strings)."""
    keys = ["id", *(a.key for a in st.arms)]
    name = STATE_NAMES.__getitem__
    return [dict(zip(keys, (item_id, *map(name, row))))
            for item_id, row in zip(st.ids, st.codes().tolist())]


class Ledger(Mapping[str, dict[str, str]]):
    """The ledger's rows by id, each made when looked up (ledger_rows' row): what a
    process that holds the states, not the report, reads of a few items
    (vbw.report.pagedata)."""

    def __init__(self, st: ItemStates) -> None:
        self._index = {item_id: i for i, item_id in enumerate(st.ids)}
        self._keys = ["id", *(a.key for a in st.arms)]
        self._codes = st.codes()

    def __getitem__(self, item_id: str) -> dict[str, str]:
        i = self._index[item_id]
        return dict(zip(self._keys, (item_id, *map(STATE_NAMES.__getitem__,
                                                   self._codes[i].tolist()))))

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


def excluded_of(st: ItemStates) -> Excluded:
    """report.json's `excluded`: the items no arm is scored on, and why."""
    return Excluded(n=len(st.excluded), ids=st.excluded, reason=EXCLUDED_REASON,
                    reasons=st.excluded_reasons)


def build_report(st: ItemStates, *, task: str, label: str, mode: str, meta: dict[str, Any],
                 source: str, provenance: str, seed: int, resamples: int, n_task: int,
                 missing: list[str]) -> Report:
    """Everything report.json holds. n_task counts the task items selected for scoring and
    `missing` lists those the replay lacks; every one is scored, excluded or missing.
    Each arm and each comparison resamples from a stream derived from the seed and its own
    key, so its CI does not depend on the other arms."""
    if n_task != len(st.ids) + len(st.excluded) + len(missing):
        raise ValueError(f"n_task={n_task} but {len(st.ids)} scored + {len(st.excluded)} "
                         f"excluded + {len(missing)} missing")
    arms = {a.key: arm_metrics(st, a, key_rng(seed, a.key), resamples) for a in st.arms}
    comparisons = [compare(st, a, b, k, key_rng(seed, comparison_key(a.key, b.key)), resamples)
                   for a, b, k in comparison_pairs(st.arms)]
    ledger = ledger_rows(st)
    excluded = excluded_of(st)
    fields = field_metrics(st, seed, resamples)
    # Constructed, not validated: every part is built above from validated models, and
    # validating would copy the ledger (a dict per item) once more.
    return Report.model_construct(
        task=task, correctness_label=label, n=len(st.ids), n_task=n_task, mode=mode,
        excluded=excluded, missing=Missing(n=len(missing), ids=missing), meta=meta,
        source=source, provenance=provenance,
        bootstrap={"resamples": resamples, "seed": seed, "level": 0.95, "method": "percentile"},
        arms=arms, comparisons=comparisons,
        interventions=summarise(st.events, st.arms, st.valid, st.right, comparisons),
        tax=summarise_tax(getattr(st, "tax", None), st.arms, st.valid, st.right),
        cost=summarise_cost(getattr(st, "cost", None), st.arms,
                            int(st.s_valid.shape[2]) if getattr(st, "s_valid", None) is not None
                            else 1),
        samples=sampled_figures(st, seed, resamples),
        fields=fields, fields_from=st.field_label if fields else "",
        ledger=ledger)
