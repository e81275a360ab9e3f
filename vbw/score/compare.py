"""Paired comparison of two or more replays of one task, item by item (mode=compare).

"Did the other engine, quantisation or server change anything?" is a paired question: the
same items went through both runs, so each item is compared with itself. Replays are
paired on item id, and only items scored in EVERY replay are compared (not excluded as
unsupported_schema, not missing), so every comparison runs on the same items; the rest are
listed with why.

How it works and why: docs/design.md, section vbw.score.compare.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from vbw.score.bootstrap import key_rng
from vbw.score.cost import summarise_cost
from vbw.score.interventions import summarise
from vbw.score.metrics import metric_columns
from vbw.score.pairs import paired_delta
from vbw.score.results import METRICS, ArmCost, ArmInterventions, Delta, SampledDelta
from vbw.score.sampled import mean_fraction
from vbw.score.samples import MC_KEY, counts_of, paired_fractions
from vbw.score.paired import ALPHA, POWER
from vbw.score.digest import NO_TEXT
from vbw.score.fields import field_key, named_codes
from vbw.score.states import ItemStates
from vbw.score.stream import Scored
from vbw.task.arms import Arm
from vbw.task.fields import ABSENT, NOT_READ, RIGHT

# which way is worse, per metric: a drop in validity or accuracy, a rise in wrong-but-valid
HIGHER_IS_BETTER = {"schema_validity": True, "answer_accuracy": True, "wrong_but_valid": False}
TEST = {"name": "exact McNemar (two-sided binomial test on the discordant items)",
        "alpha": ALPHA, "power": POWER,
        "mde": "smallest |delta| the test detects with this power, given N and the "
               "observed number of discordant items"}


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ReplaySide(_M):
    """One compared replay: how it is named in the report and what it held."""
    label: str
    path: str
    sha256: str
    task_hash: str | None
    provenance: str
    excluded: dict[str, str]  # item id -> why its schema could not be enforced
    missing: list[str]  # task items the file does not hold
    # k: samples per item and arm (a vbw-replay/2 replay); left out for one
    samples: int = Field(default=1, exclude_if=lambda v: v == 1)


class MetricPair(_M):
    """A metric of one arm in two replays over the paired items; when either replay holds
    k > 1 samples per item the rates are mean fractions and `delta` a SampledDelta (the
    sign-flip test on per-item fractions, vbw.score.samples)."""
    rate_from: float
    rate_to: float
    delta: Delta | SampledDelta


class ArmPair(_M):
    identical: int  # paired items whose texts are byte-identical in both replays
    identical_share: float
    metrics: dict[str, MetricPair]
    # per field of the task (vbw.score.fields), its accuracy over the paired items that
    # have it; a field the arm cannot state is left out; {}: the task has no fields
    fields: dict[str, MetricPair] = {}


class ReplayComparison(_M):
    from_: str = Field(alias="from")
    to: str
    arms: dict[str, ArmPair]


class LeftOut(_M):
    """Task items not compared: excluded from or missing in at least one replay.
    `reasons`: item id -> replay label -> "excluded: <why>" or "missing"."""
    n: int
    ids: list[str]
    reasons: dict[str, dict[str, str]]


class CompareReport(_M):
    task: str
    correctness_label: str
    mode: Literal["compare"] = "compare"
    n: int  # paired items: scored in every replay
    n_task: int
    replays: list[ReplaySide]
    arms: list[str]
    arms_left_out: dict[str, list[str]]  # arm key -> labels of the replays that have it
    left_out: LeftOut
    task_hash: str
    task_check: str  # how the replays' task versions were checked
    bootstrap: dict[str, Any]
    test: dict[str, Any]
    comparisons: list[ReplayComparison]
    # replay label -> enforced arm -> its interventions over the paired items (issue 19)
    interventions: dict[str, dict[str, ArmInterventions]] = {}
    # replay label -> arm -> what it cost over the paired items (vbw.score.cost)
    cost: dict[str, dict[str, ArmCost]] = {}


def pair_key(arm: str, sha_from: str, sha_to: str) -> str:
    """The key of one (arm, replay pair)'s bootstrap stream."""
    return f"compare {arm}: {sha_from} -> {sha_to}"


def _left_out(selected: list[str], paired: set[str], sides: list[ReplaySide]) -> LeftOut:
    reasons: dict[str, dict[str, str]] = {}
    for item_id in selected:
        if item_id in paired:
            continue
        reasons[item_id] = {s.label: f"excluded: {s.excluded[item_id]}"
                            if item_id in s.excluded else "missing" for s in sides
                            if item_id in s.excluded or item_id in s.missing}
    return LeftOut(n=len(reasons), ids=list(reasons), reasons=reasons)


def _rows(states: ItemStates, ids: list[str]) -> np.ndarray:
    where = {item_id: row for row, item_id in enumerate(states.ids)}
    return np.array([where[i] for i in ids], dtype=np.int64)


def _digests(s: Scored) -> np.ndarray:
    if s.digests is None:
        raise ValueError("compare needs the replays scored with digests=True")
    return s.digests


def _arm_pair(a: Scored, b: Scored, shas: tuple[str, str], arm: Arm, ids: list[str],
              seed: int, resamples: int) -> ArmPair:
    rows_a, rows_b = _rows(a.states, ids), _rows(b.states, ids)
    cols_a = metric_columns(a.states, a.states.arms.index(arm))
    cols_b = metric_columns(b.states, b.states.arms.index(arm))
    rng = key_rng(seed, pair_key(arm.key, *shas))
    metrics = {}
    if getattr(a.states, "s_right", None) is not None or \
            getattr(b.states, "s_right", None) is not None:
        metrics = _sampled_pairs(a.states, b.states, (rows_a, rows_b), arm, rng, resamples,
                                 key_rng(seed, MC_KEY + pair_key(arm.key, *shas)))
    for m in METRICS if not metrics else ():
        if m in cols_a:
            x, y = cols_a[m][rows_a], cols_b[m][rows_b]
            metrics[m] = MetricPair(rate_from=float(x.mean()) if ids else 0.0,
                                    rate_to=float(y.mean()) if ids else 0.0,
                                    delta=paired_delta(x, y, rng, resamples))
    da = _digests(a)[rows_a, a.states.arms.index(arm)]
    db = _digests(b)[rows_b, b.states.arms.index(arm)]
    same = int(np.count_nonzero((da != NO_TEXT) & (da == db)))
    return ArmPair(identical=same, identical_share=same / len(ids) if ids else 0.0,
                   metrics=metrics,
                   fields=_field_pairs(a.states, b.states, (rows_a, rows_b), arm, shas, seed,
                                       resamples))


def _sampled_pairs(a: ItemStates, b: ItemStates, rows: tuple[np.ndarray, np.ndarray],
                   arm: Arm, rng: np.random.Generator, resamples: int,
                   mc_rng: np.random.Generator) -> dict[str, MetricPair]:
    """Each metric's mean fraction, A against B, when either replay has k > 1 samples."""
    (ca, ka), (cb, kb) = counts_of(a, a.arms.index(arm)), counts_of(b, b.arms.index(arm))
    out = {}
    for m in METRICS:
        if m in ca:
            x, y = ca[m][rows[0]], cb[m][rows[1]]
            out[m] = MetricPair(rate_from=mean_fraction(x, ka) if x.size else 0.0,
                                rate_to=mean_fraction(y, kb) if y.size else 0.0,
                                delta=paired_fractions(x, ka, y, kb, rng, resamples, mc_rng))
    return out


def _field_pairs(a: ItemStates, b: ItemStates, rows: tuple[np.ndarray, np.ndarray], arm: Arm,
                 shas: tuple[str, str], seed: int, resamples: int) -> dict[str, MetricPair]:
    """Each field's accuracy, A against B, over the paired items that have it; its stream
    is keyed pair_key("{field}: {arm}", ...)."""
    out = {}
    ja, jb = a.arms.index(arm), b.arms.index(arm)
    for (name, ca), (_, cb) in zip(named_codes(a), named_codes(b)):
        x, y = ca[rows[0], ja], cb[rows[1], jb]
        keep = (x != ABSENT) & (y != ABSENT)
        if not keep.any() or (x[keep] == NOT_READ).any() or (y[keep] == NOT_READ).any():
            continue
        xr, yr = x[keep] == RIGHT, y[keep] == RIGHT
        rng = key_rng(seed, pair_key(field_key(name, arm.key), *shas))
        out[name] = MetricPair(rate_from=float(xr.mean()), rate_to=float(yr.mean()),
                               delta=paired_delta(xr, yr, rng, resamples))
    return out


def build_comparison(sides: list[ReplaySide], scored: list[Scored], arms: list[Arm], *,
                     task: str, label: str, selected: list[str], task_hash: str,
                     task_check: str, arms_left_out: dict[str, list[str]], seed: int,
                     resamples: int) -> CompareReport:
    """Pair the replays (each its side in the report and its scoring, vbw.score.stream,
    with digests) on the items scored in all of them and compare each to the first."""
    common = set(scored[0].states.ids)
    for s in scored[1:]:
        common &= set(s.states.ids)
    ids = [i for i in scored[0].states.ids if i in common]
    comparisons = []
    ref = scored[0]
    for side, other in zip(sides[1:], scored[1:]):
        shas = (sides[0].sha256, side.sha256)
        pairs = {arm.key: _arm_pair(ref, other, shas, arm, ids, seed, resamples)
                 for arm in arms}
        comparisons.append(ReplayComparison(from_=sides[0].label, to=side.label,
                                            arms=pairs))
    return CompareReport(task=task, correctness_label=label, n=len(ids),
                         interventions={side.label: _interventions(s, ids)
                                        for side, s in zip(sides, scored)},
                         cost={side.label: _cost(s, ids, arms, side.samples)
                               for side, s in zip(sides, scored)},
                         n_task=len(selected), replays=sides,
                         arms=[a.key for a in arms], arms_left_out=arms_left_out,
                         left_out=_left_out(selected, common, sides),
                         task_hash=task_hash, task_check=task_check,
                         bootstrap={"resamples": resamples, "seed": seed, "level": 0.95,
                                    "method": "percentile"},
                         test=TEST, comparisons=comparisons)


def _interventions(s: Scored, ids: list[str]) -> dict[str, ArmInterventions]:
    """One replay's per-arm intervention summary over the paired items (no flips: they
    belong to a report's headline comparisons)."""
    rows, st = _rows(s.states, ids), s.states
    events = None if st.events is None else st.events[rows]
    return summarise(events, st.arms, st.valid[rows], st.right[rows], [])


def _cost(s: Scored, ids: list[str], arms: list[Arm], k: int) -> dict[str, ArmCost]:
    """One replay's cost per compared arm over the paired items."""
    rows, st = _rows(s.states, ids), s.states
    cols = [next(j for j, a in enumerate(st.arms) if a.key == arm.key) for arm in arms]
    cost = getattr(st, "cost", None)
    table = None if cost is None else cost[rows][:, cols]
    return summarise_cost(table, arms, k)


def worse(report: CompareReport, gates: list[tuple[str, str]]) -> list[str]:
    """(arm key, metric) gates that trip: in some comparison the metric moved the bad way
    (HIGHER_IS_BETTER) and is an effect (Delta.effect: exact McNemar p < ALPHA, the verdict
    every report prints). One line each."""
    tripped = []
    for c in report.comparisons:
        for arm, metric in gates:
            pair = c.arms[arm].metrics[metric]
            d = pair.delta
            bad = d.delta < 0 if HIGHER_IS_BETTER[metric] else d.delta > 0
            if bad and d.effect:
                test = f"exact McNemar p={d.mcnemar_p:.3g}" if isinstance(d, Delta) else \
                    f"sign-flip test on per-item fractions, p={d.p:.3g}"
                tripped.append(f"{arm} {metric} {100 * pair.rate_from:.1f}% in {c.from_} -> "
                               f"{100 * pair.rate_to:.1f}% in {c.to} ({test})")
    return tripped
