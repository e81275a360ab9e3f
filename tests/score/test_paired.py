"""The exact McNemar test and its minimum detectable effect: against values computed by
hand from the binomial formula, against scipy's exact binomial test and distribution, and
at the edges (no discordant item, too few to ever reject, the exact/log-space switch)."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binom, binomtest

from vbw.score.paired import (ALPHA, EXACT_UP_TO, POWER, critical_count, mcnemar_p,
                              min_detectable_effect, rejection_power)


def test_ten_vs_two_by_hand() -> None:
    # p = 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12
    assert mcnemar_p(10, 2) == 2 * (1 + 12 + 66) / 2 ** 12
    assert mcnemar_p(2, 10) == mcnemar_p(10, 2)
    assert 0.0385 < mcnemar_p(10, 2) < 0.0386


def test_edges_by_hand() -> None:
    assert mcnemar_p(0, 0) == 1.0            # no discordant item: no evidence at all
    assert mcnemar_p(3, 3) == 1.0            # a perfect split is capped at 1
    assert mcnemar_p(5, 0) == 2 / 2 ** 5     # 0.0625: five one way cannot reject
    assert mcnemar_p(6, 0) == 2 / 2 ** 6     # 0.03125: six can
    assert mcnemar_p(1, 0) == 1.0
    with pytest.raises(ValueError):
        mcnemar_p(-1, 2)


@pytest.mark.parametrize("n10,n01", [(10, 2), (0, 7), (13, 8), (21, 10), (90, 7), (110, 1),
                                     (250, 300), (499, 501), (600, 700), (1500, 1610),
                                     (40, 2000)])
def test_matches_scipy_exact_binomial_test(n10: int, n01: int) -> None:
    ref = binomtest(min(n10, n01), n10 + n01, 0.5, alternative="two-sided").pvalue
    assert mcnemar_p(n10, n01) == pytest.approx(ref, rel=1e-9, abs=1e-300)


def test_exact_and_log_space_agree_across_the_switch() -> None:
    for d in (EXACT_UP_TO - 1, EXACT_UP_TO, EXACT_UP_TO + 1, EXACT_UP_TO + 2):
        for k in (d // 2 - 40, d // 2 - 31, d // 2):
            ref = binomtest(k, d, 0.5).pvalue
            assert mcnemar_p(k, d - k) == pytest.approx(ref, rel=1e-9), (d, k)


def test_critical_count_by_hand() -> None:
    assert critical_count(0) == -1 and critical_count(5) == -1   # 2/32 >= 0.05
    assert critical_count(6) == 0                                # 2/64 < 0.05
    # d=12: p(2 vs 10) = 0.0386 < 0.05, p(3 vs 9) = 2*(1+12+66+220)/4096 = 0.146
    assert critical_count(12) == 2
    for d in (12, 31, 200, 1500):
        c = critical_count(d)
        assert mcnemar_p(c, d - c) < ALPHA <= mcnemar_p(c + 1, d - c - 1)


@pytest.mark.parametrize("d,q", [(6, 0.9), (12, 0.8), (31, 0.7), (200, 0.58), (1500, 0.53)])
def test_rejection_power_matches_scipy(d: int, q: float) -> None:
    c = critical_count(d)
    ref = binom.cdf(c, d, q) + binom.sf(d - c - 1, d, q)
    assert rejection_power(d, q) == pytest.approx(ref, rel=1e-9)


def test_mde_six_discordant_solves_the_hand_equation() -> None:
    # with d=6 only 0-vs-6 rejects: power(q) = q^6 + (1-q)^6; MDE = (d/n)(2q-1)
    n, d = 100, 6
    m = min_detectable_effect(n, d)
    assert m is not None
    q = (1 + m * n / d) / 2
    assert q ** 6 + (1 - q) ** 6 == pytest.approx(POWER, abs=1e-9)


@pytest.mark.parametrize("n,d", [(200, 12), (200, 31), (200, 97), (1000, 40), (50, 50)])
def test_mde_is_the_smallest_effect_with_the_power(n: int, d: int) -> None:
    m = min_detectable_effect(n, d)
    assert m is not None and 0 < m <= d / n

    def power(effect: float) -> float:  # scipy, independently of vbw's own sums
        q = (1 + effect * n / d) / 2
        c = critical_count(d)
        return binom.cdf(c, d, q) + binom.sf(d - c - 1, d, q)

    assert power(m) >= POWER - 1e-9
    assert power(m - 1e-6) < POWER


def test_mde_none_when_nothing_is_detectable() -> None:
    assert min_detectable_effect(200, 0) is None   # the two agree on every item
    assert min_detectable_effect(200, 5) is None   # 5 all one way: p = 0.0625
    assert min_detectable_effect(0, 0) is None
    assert min_detectable_effect(200, 6) is not None


def test_power_rises_with_the_effect() -> None:
    """The bisection needs power to grow with q above 1/2; checked on a fine grid."""
    for d in (6, 13, 50, 200):
        powers = [rejection_power(d, 0.5 + i / 400) for i in range(201)]
        assert all(b >= a - 1e-12 for a, b in zip(powers, powers[1:])), d
        assert powers[0] < ALPHA and powers[-1] == 1.0


def test_large_n_is_fast_and_finite() -> None:
    import time

    t = time.perf_counter()
    m = min_detectable_effect(100_000, 20_000)
    assert m is not None and math.isfinite(m) and m < 0.2
    assert mcnemar_p(9_000, 11_000) < 1e-40
    assert time.perf_counter() - t < 5
