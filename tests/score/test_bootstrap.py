"""The count-based bootstrap agrees with a naive resample-the-items bootstrap."""

from __future__ import annotations

import numpy as np

from vbw.score.bootstrap import delta_ci, rate_ci


def _naive(values: np.ndarray, rng: np.random.Generator, b: int) -> tuple[float, float]:
    n = values.size
    means = np.array([values[rng.integers(0, n, n)].mean() for _ in range(b)])
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def test_rate_ci_matches_naive_bootstrap() -> None:
    data = np.random.default_rng(0).random(200) < 0.3
    fast = rate_ci(data, np.random.default_rng(1), 20000)
    slow = _naive(data.astype(float), np.random.default_rng(2), 20000)
    assert abs(fast[0] - slow[0]) <= 0.006 and abs(fast[1] - slow[1]) <= 0.006
    assert fast[0] < data.mean() < fast[1]


def test_delta_ci_matches_naive_paired_bootstrap() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(200) < 0.4
    b = a.copy()
    b[rng.choice(200, 30, replace=False)] = True
    fast = delta_ci(a, b, np.random.default_rng(4), 20000)
    slow = _naive(b.astype(float) - a.astype(float), np.random.default_rng(5), 20000)
    assert abs(fast[0] - slow[0]) <= 0.006 and abs(fast[1] - slow[1]) <= 0.006
    assert fast[0] > 0


def test_degenerate_and_seeded() -> None:
    ones = np.ones(50, dtype=bool)
    assert rate_ci(ones, np.random.default_rng(0), 2000) == (1.0, 1.0)
    assert delta_ci(ones, ones, np.random.default_rng(0), 2000) == (0.0, 0.0)
    x = np.arange(100) % 3 == 0
    assert rate_ci(x, np.random.default_rng(42), 2000) == rate_ci(x, np.random.default_rng(42), 2000)
    assert rate_ci(np.zeros(0, dtype=bool), np.random.default_rng(0), 10) == (0.0, 0.0)
