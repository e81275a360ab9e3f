"""Statistics of k samples per item and arm: pass@k, majority vote, a paired sign-flip
test and cluster-bootstrap CIs on per-item fractions right.

Every function reduces to today's single-sample statistics when k = 1, bit for bit: the
mean fraction to the mean accuracy, the sign-flip test to McNemar's test
(vbw.score.paired), the CIs to vbw.score.bootstrap's (same draws from the same stream).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vbw.score.bootstrap import bounds, rate_ci
from vbw.score.paired import log_choose, mcnemar_p

EXACT_SUPPORT_UP_TO = 60_001  # values of S = sum of eps_i*|d_i| the exact test convolves
MC_DRAWS = 100_000            # sign-flip draws of the Monte Carlo test above that bound


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one item with c of n samples right (Chen et al. 2021):
    1 - C(n-c, k)/C(n, k), as the product 1 - prod_{i=n-c+1..n} (1 - k/i). For k = 1 it
    is c/n, returned as that quotient."""
    if k < 1 or k > n or c < 0 or c > n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    if k == 1:
        return c / n
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_fraction(counts: np.ndarray, n: int) -> float:
    """The mean fraction right over items with n samples each: right samples / samples,
    one correctly rounded quotient of integers (for n = 1, the mean of the 0/1 vector)."""
    return float(int(np.sum(counts)) / (n * counts.size)) if counts.size else 0.0


def mean_pass_at_k(correct: np.ndarray, n: int, k: int) -> float:
    """pass@k averaged over items, from each item's count of right samples out of n; for
    k = 1 it is mean_fraction (the mean accuracy), exactly."""
    values = [pass_at_k(n, int(c), k) for c in correct]
    if k == 1 or not values:
        return mean_fraction(np.asarray(correct), n)
    return float(np.mean(values))


@dataclass(frozen=True)
class Vote:
    """The majority vote of one item's samples: whether the winning answer is right,
    whether its top count was tied, how many samples voted for it, and the index of the
    winner's first sample (None when no sample gave an answer)."""

    right: bool
    tied: bool
    votes: int
    winner: int | None


def majority(answers: Sequence[Hashable | None], right: Sequence[bool]) -> Vote:
    """The majority vote over canonical answers (None, no answer extracted, does not
    vote). A tie between the top answers goes to the one whose first sample came first
    (Counter.most_common's order); the vote is right when that first sample is."""
    if len(answers) != len(right):
        raise ValueError(f"{len(answers)} answers but {len(right)} right flags")
    counts = Counter(a for a in answers if a is not None)
    if not counts:
        return Vote(right=False, tied=False, votes=0, winner=None)
    (top, votes), *rest = counts.most_common()
    first = answers.index(top)
    return Vote(right=bool(right[first]), tied=bool(rest) and rest[0][1] == votes,
                votes=votes, winner=first)


# Tally.vote's codes: whether the vote is right, and whether its top count was tied
VOTE_RIGHT, VOTE_TIED = 1, 2


def vote_code(v: Vote) -> int:
    return (VOTE_RIGHT if v.right else 0) | (VOTE_TIED if v.tied else 0)


def canonical(answer: Any) -> str | None:
    """An extracted answer as the vote counts it: JSON with sorted keys, a number as its
    float value (12 and 12.0 are one answer); None: no answer."""
    if answer is None:
        return None
    return json.dumps(_numbers_as_floats(answer), sort_keys=True, ensure_ascii=False,
                      allow_nan=True)


def _numbers_as_floats(v: Any) -> Any:
    if type(v) is int:
        return float(v) if abs(v) < 2**53 else v
    if isinstance(v, dict):
        return {k: _numbers_as_floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_numbers_as_floats(x) for x in v]
    return v


def all_right(right: Sequence[bool]) -> bool:
    """Reliability of one item: every one of its samples right (False with no sample)."""
    return len(right) > 0 and all(right)


def _differences(diffs: np.ndarray, k: int) -> np.ndarray:
    """The per-item differences as int64, each an integer in [-k, k]."""
    d = np.asarray(diffs)
    if k < 1 or (d.size and (not np.issubdtype(d.dtype, np.integer) or np.abs(d).max() > k)):
        raise ValueError(f"differences must be integers in [-k, k], k >= 1, got k={k}, {d!r}")
    return d.astype(np.int64)


def _null_pmf(per_m: np.ndarray) -> np.ndarray:
    """P(S = s) for s = -T..T (index s + T) under independent fair signs, T = sum of
    magnitudes: per magnitude m, m*(2*Binomial(n_m, 1/2) - n_m), convolved."""
    pmf = np.ones(1)
    for m, n_m in enumerate(per_m.tolist(), start=1):
        if n_m:
            kernel = np.zeros(2 * m * n_m + 1)
            kernel[::2 * m] = np.exp(log_choose(n_m) - n_m * math.log(2.0))
            pmf = np.convolve(pmf, kernel)
    return pmf


def _exact_p(per_m: np.ndarray, s_obs: int) -> float:
    """P(|S| >= s_obs) from the exact null distribution, summed by integer index."""
    pmf = _null_pmf(per_m)
    t = (pmf.size - 1) // 2
    return float(pmf[:t - s_obs + 1].sum() + pmf[t + s_obs:].sum())


def _mc_p(per_m: np.ndarray, s_obs: int, rng: np.random.Generator, draws: int) -> float:
    """(1 + #{|S*| >= s_obs}) / (1 + draws): each draw flips every item's sign; the n_m
    items of magnitude m then add m*(2*Binomial(n_m, 1/2) - n_m), drawn in one go."""
    s = np.zeros(draws, dtype=np.int64)
    for m, n_m in enumerate(per_m.tolist(), start=1):
        if n_m:
            s += m * (2 * rng.binomial(n_m, 0.5, size=draws) - n_m)
    return (1 + int(np.count_nonzero(np.abs(s) >= s_obs))) / (1 + draws)


def sign_flip_p(diffs: np.ndarray, k: int, rng_for_mc: np.random.Generator | None = None,
                draws: int = MC_DRAWS) -> float:
    """The two-sided paired permutation p of per-item differences of right counts
    (arm B - arm A, integers in [-k, k]): P(|S| >= |s_obs|) for S = sum of eps_i*|d_i|.
    All nonzero |d_i| equal (always so at k = 1): the sign test, i.e. mcnemar_p. Else
    exact up to EXACT_SUPPORT_UP_TO values of S, Monte Carlo from rng_for_mc above."""
    d = _differences(diffs, k)
    per_m, s_obs = np.bincount(np.abs(d), minlength=k + 1)[1:], abs(int(d.sum()))
    if np.count_nonzero(per_m) <= 1:
        return mcnemar_p(int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0)))
    if s_obs == 0:
        return 1.0
    if 2 * int(per_m @ np.arange(1, k + 1)) + 1 <= EXACT_SUPPORT_UP_TO:
        return min(1.0, max(0.0, _exact_p(per_m, s_obs)))
    if rng_for_mc is None:
        raise ValueError("sign_flip_p above EXACT_SUPPORT_UP_TO needs rng_for_mc")
    return min(1.0, _mc_p(per_m, s_obs, rng_for_mc, draws))


def _check_counts(counts: np.ndarray, k: int) -> np.ndarray:
    """The per-item right counts as int64, each in 0..k."""
    c = np.asarray(counts).astype(np.int64)
    if k < 1 or (c.size and (c.min() < 0 or c.max() > k)):
        raise ValueError(f"right counts must lie in 0..k with k >= 1, got k={k}, {c!r}")
    return c


def fraction_ci(counts: np.ndarray, k: int, rng: np.random.Generator, resamples: int,
                level: float = 0.95) -> tuple[float, float]:
    """CI of the mean fraction right, resampling items with their k samples together: a
    resample is Multinomial(n, shares of the k + 1 counts). At k = 1, rate_ci itself."""
    c = _check_counts(counts, k)
    if k == 1:
        return rate_ci(c.astype(bool), rng, resamples, level)
    n = int(c.size)
    if n == 0:
        return (0.0, 0.0)
    draws = rng.multinomial(n, np.bincount(c, minlength=k + 1) / n, size=resamples)
    return bounds(draws @ np.arange(k + 1) / (k * n), level)


def fraction_delta_ci(before_counts: np.ndarray, after_counts: np.ndarray, k: int,
                      rng: np.random.Generator, resamples: int,
                      level: float = 0.95) -> tuple[float, float]:
    """CI of mean(after - before) of per-item fractions, resampling items: Multinomial
    over the 2k + 1 differences -k..k in increasing order (at k = 1, delta_ci's draw)."""
    a, b = _check_counts(before_counts, k), _check_counts(after_counts, k)
    if a.size != b.size:
        raise ValueError(f"{a.size} items before but {b.size} after")
    n = int(a.size)
    if n == 0:
        return (0.0, 0.0)
    shares = np.bincount(b - a + k, minlength=2 * k + 1) / n
    draws = rng.multinomial(n, shares, size=resamples)
    return bounds(draws @ np.arange(-k, k + 1) / (k * n), level)

