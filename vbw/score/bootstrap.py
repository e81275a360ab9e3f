"""Percentile bootstrap CIs from category counts.

Resampling n items with replacement and averaging 0/1 values is a Binomial(n, k/n) draw
divided by n; a paired difference of 0/1 values takes -1/0/+1, so its resampled mean is a
Multinomial draw over those three counts. Both are exact and need no loop per resample.

Each arm and each comparison draws from its own stream, seeded by the run's seed and a
digest of its key, so adding or dropping an arm never moves another arm's interval.
"""

from __future__ import annotations

import hashlib

import numpy as np


def key_rng(seed: int, key: str) -> np.random.Generator:
    """The Generator for one arm or comparison: SeedSequence([seed, sha256(key)[:8]]).
    sha256, not hash(), because str hashes are salted per process."""
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence([seed, digest]))


def bounds(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile CI of resampled means at `level`, rounded to 10 decimals."""
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [alpha, 1.0 - alpha])
    return round(float(lo), 10), round(float(hi), 10)


def rate_ci(hits: np.ndarray, rng: np.random.Generator, resamples: int,
            level: float = 0.95) -> tuple[float, float]:
    """CI of the mean of a 0/1 vector."""
    n = int(hits.size)
    if n == 0:
        return (0.0, 0.0)
    k = int(np.count_nonzero(hits))
    draws = rng.binomial(n, k / n, size=resamples) / n
    return bounds(draws, level)


def delta_ci(before: np.ndarray, after: np.ndarray, rng: np.random.Generator,
             resamples: int, level: float = 0.95) -> tuple[float, float]:
    """CI of mean(after - before) for paired 0/1 vectors, resampling items."""
    n = int(before.size)
    if n == 0:
        return (0.0, 0.0)
    diff = after.astype(np.int8) - before.astype(np.int8)
    counts = np.array([np.count_nonzero(diff == -1), np.count_nonzero(diff == 0),
                       np.count_nonzero(diff == 1)])
    draws = rng.multinomial(n, counts / n, size=resamples)
    return bounds((draws[:, 2] - draws[:, 0]) / n, level)
