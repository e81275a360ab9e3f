"""What each arm cost, from the timings and token counts its replay records: output
tokens per answer, seconds per item, milliseconds per output token, time to the first
token and the schema compiles (first and cached). A figure no scored item recorded is
None ("not recorded"), never 0.

Per item and arm, `Tally.cost` keeps one row of COLUMNS (NaN: not recorded), summed over
the item's k samples (time to first token: their mean). An arm that reuses another arm's
text (reason_then_constrain reuses unconstrained's reasoning, `reuses` in its record)
is charged that arm's tokens and seconds too: run alone, it would generate them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vbw.score.results import ArmCost, CompileCost, MeanCI
from vbw.task.arms import Arm

# Tally.cost's last axis: sums over the item's answers but `ttft` (their mean); `compile`
# the seconds of the compiles, `compiles` how many answers compiled, `cached` how many hit
# the cache (0 s)
COLUMNS = ("tokens", "seconds", "ttft", "compile", "compiles", "cached")
TOKENS, SECONDS, TTFT, COMPILE, COMPILES, CACHED = range(6)
Z95 = 1.959963984540054  # the normal quantile of a 95% two-sided interval


def new_rows(n: int, arms: int) -> np.ndarray:
    """Tally's cost rows: NaN where not recorded."""
    return np.full((n, arms, len(COLUMNS)), np.nan)


def _number(value: Any) -> float:
    return float(value) if type(value) in (int, float) and math.isfinite(value) else math.nan


def _one(raw: Mapping[str, Any], arms: Mapping[str, Any]) -> list[float]:
    """One answer's row; a reused arm's tokens and seconds added (module docstring)."""
    tokens, seconds = _number(raw.get("n_tokens")), _number(raw.get("seconds"))
    reused = raw.get("reuses")
    if type(reused) is str:
        other = arms.get(reused)
        other = other if isinstance(other, Mapping) else {}
        tokens += _number(other.get("n_tokens"))
        seconds += _number(other.get("seconds"))
    compile_s = _number(raw.get("compile_seconds"))
    return [tokens, seconds, _number(raw.get("ttft_seconds")), compile_s,
            math.nan if math.isnan(compile_s) else float(compile_s > 0),
            math.nan if math.isnan(compile_s) else float(compile_s == 0)]


def cost_row(rec: Any, arms: Sequence[Arm]) -> np.ndarray:
    """An item's row per arm (shape: arms x COLUMNS) from its ScoredRecord `rec`: tokens,
    seconds and compile seconds summed over its samples, the time to first token their
    mean; NaN where any sample lacks the figure."""
    records = [rec, *(rec.samples or [])]
    out = np.full((len(arms), len(COLUMNS)), np.nan)
    for j, arm in enumerate(arms):
        rows = []
        for r in records:
            raw = (r.arms or {}).get(arm.key)
            rows.append(_one(raw, r.arms or {}) if isinstance(raw, Mapping)
                        else [math.nan] * len(COLUMNS))
        block = np.asarray(rows)
        out[j] = block.sum(axis=0)
        out[j, TTFT] = block[:, TTFT].mean()
    return out


def _mean_ci(values: np.ndarray, per: int) -> MeanCI | None:
    """Mean of `values / per` with its normal-approximation 95% CI; None when empty."""
    if values.size == 0:
        return None
    v = values / per
    mean = float(v.mean())
    half = Z95 * float(v.std(ddof=1)) / math.sqrt(v.size) if v.size > 1 else 0.0
    return MeanCI(mean=round(mean, 6), ci95=(round(mean - half, 6), round(mean + half, 6)),
                  items=int(v.size))


def _compile(rows: np.ndarray, enforced: bool, compiles_here: bool) -> CompileCost | None:
    """The compiles that took time and the cache hits that took none, of an enforced arm,
    from its rows' COMPILE, COMPILES and CACHED columns; None for an arm without a schema
    to compile, when none was recorded, or when no arm of the run ever compiled here
    (`compiles_here` False: a server compiles on its side)."""
    rows = rows[~np.isnan(rows[:, COMPILE])]
    if not enforced or not compiles_here or rows.size == 0:
        return None
    first = rows[rows[:, COMPILES] > 0]
    per = first[:, COMPILE] / first[:, COMPILES]
    return CompileCost(first=int(first[:, COMPILES].sum()),
                       first_median=round(float(np.median(per)), 6) if per.size else None,
                       first_total=round(float(first[:, COMPILE].sum()), 6),
                       cached=int(rows[:, CACHED].sum()))


def summarise_cost(cost: np.ndarray | None, arms: list[Arm], samples: int = 1) -> dict[str, ArmCost]:
    """report.json's `cost`: per arm, its figures over the scored items that recorded each.

    Args:
        cost: per (item, arm) a row of COLUMNS, NaN where not recorded (None: no rows).
        arms: the scored arms, in the columns' order.
        samples: k, answers per item and arm (tokens are per answer, seconds per item).
    Returns:
        Arm key -> its cost.
    """
    out: dict[str, ArmCost] = {}
    if cost is None:
        cost = new_rows(0, len(arms))
    compiles_here = bool(np.nansum(cost[:, :, COMPILES]) > 0)
    for j, arm in enumerate(arms):
        col = cost[:, j]
        tokens, seconds, ttft = (col[:, i] for i in (TOKENS, SECONDS, TTFT))
        both = ~np.isnan(tokens) & ~np.isnan(seconds) & (tokens > 0)
        recorded = {name: int((~np.isnan(col[:, i])).sum())
                    for i, name in enumerate(COLUMNS[:COMPILES])}
        out[arm.key] = ArmCost(
            items=int(col.shape[0]), enforced=arm.enforced, recorded=recorded,
            output_tokens=_mean_ci(tokens[~np.isnan(tokens)], samples),
            seconds_per_item=_mean_ci(seconds[~np.isnan(seconds)], 1),
            ms_per_token=(round(1000 * float(seconds[both].sum() / tokens[both].sum()), 6)
                          if both.any() else None),
            ttft_median=(round(float(np.median(ttft[~np.isnan(ttft)])), 6)
                         if (~np.isnan(ttft)).any() else None),
            compile=_compile(col, arm.enforced, compiles_here))
    return out
