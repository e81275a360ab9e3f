"""Exact paired tests on 0/1 outcomes: McNemar's test and its minimum detectable effect.

How it works and why: docs/design.md, section vbw.score.paired.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from fractions import Fraction
from functools import lru_cache

import numpy as np

ALPHA = 0.05  # two-sided level of the exact test: "detectable" is p < ALPHA
POWER = 0.8   # the power at which the MDE is stated
EXACT_UP_TO = 1000  # discordant items; beyond, tail sums come from log-space probabilities
_GRID = 40    # q points scanned before bisecting, so no monotonicity is assumed globally


@lru_cache(maxsize=64)
def log_choose(d: int) -> np.ndarray:
    """log C(d, k) for k = 0..d (math.lgamma per term: no cumulative rounding)."""
    lf = np.array([math.lgamma(i + 1) for i in range(d + 1)])
    return lf[d] - lf - lf[::-1]


@lru_cache(maxsize=64)
def _tail_p(d: int) -> tuple[float, ...]:
    """The two-sided p-value of k = 0..floor(d/2) successes in Binomial(d, 1/2)."""
    half = d // 2
    if d <= EXACT_UP_TO:
        out, c, s, total = [], 1, 0, 2 ** d
        for k in range(half + 1):
            s += c
            out.append(float(min(Fraction(1), Fraction(2 * s, total))))
            c = c * (d - k) // (k + 1)
        return tuple(out)
    pmf = np.exp(log_choose(d)[:half + 1] - d * math.log(2.0))
    return tuple(np.minimum(1.0, 2.0 * np.cumsum(pmf)).tolist())


def mcnemar_p(n10: int, n01: int) -> float:
    """The exact two-sided McNemar p-value of n10 vs n01 discordant items."""
    if n10 < 0 or n01 < 0:
        raise ValueError(f"discordant counts must be >= 0, got {n10}, {n01}")
    d = n10 + n01
    return 1.0 if d == 0 else _tail_p(d)[min(n10, n01)]


@lru_cache(maxsize=1024)
def critical_count(d: int, alpha: float = ALPHA) -> int:
    """The largest k with p(k vs d - k) < alpha: the test rejects when min(n10, n01) <= k.
    -1 when no split of d discordant items is significant. The p-values grow with k (a
    cumulative sum of probabilities, rounded monotonically), so this bisects them, once
    per d (the MDE's search asks for the same d dozens of times)."""
    tails = _tail_p(d) if d else (1.0,)
    return bisect_left(tails, alpha) - 1


def rejection_power(d: int, q: float, alpha: float = ALPHA) -> float:
    """P(the exact test rejects) when each of d discordant items goes one way with
    probability q (exact: summed over Binomial(d, q))."""
    c = critical_count(d, alpha)
    if c < 0:
        return 0.0
    if q <= 0.0 or q >= 1.0:
        return 1.0
    k = np.arange(d + 1)
    logp = log_choose(d) + k * math.log(q) + (d - k) * math.log1p(-q)
    pmf = np.exp(logp)
    return float(min(1.0, pmf[:c + 1].sum() + pmf[d - c:].sum()))


@lru_cache(maxsize=1024)
def min_detectable_effect(n: int, d: int, alpha: float = ALPHA,
                          power: float = POWER) -> float | None:
    """The smallest |delta of rates| the exact test detects with `power` at N = n items
    with d discordant ones (see the module docstring); None if no effect is detectable."""
    if n <= 0 or d <= 0 or critical_count(d, alpha) < 0:
        return None
    lo, hi = 0.5, 1.0
    for q in np.linspace(0.5, 1.0, _GRID + 1)[1:]:
        if rejection_power(d, float(q), alpha) >= power:
            hi = float(q)
            break
        lo = float(q)
    for _ in range(50):  # bisect the first crossing to ~1e-16 in q
        mid = (lo + hi) / 2
        if rejection_power(d, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return (d / n) * (2 * hi - 1)
