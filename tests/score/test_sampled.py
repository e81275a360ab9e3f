"""The statistics of k samples per item: pass@k against scipy's exact binomials and hand
values, majority votes at their ties, the sign-flip test against brute-force enumeration
of every sign vector and at its exact/Monte Carlo switch, the cluster bootstrap against a
per-resample loop; and at k = 1 each of them equals today's single-sample statistic."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import comb

from vbw.score.bootstrap import delta_ci, rate_ci
from vbw.score.paired import mcnemar_p
from vbw.score.sampled import (EXACT_SUPPORT_UP_TO, MC_DRAWS, Vote, _exact_p, all_right,
                               fraction_ci, fraction_delta_ci, majority, mean_fraction,
                               mean_pass_at_k, pass_at_k, sign_flip_p)


def _pass_ref(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k)/C(n, k) in exact integers (scipy) and rationals."""
    return float(1 - Fraction(int(comb(n - c, k, exact=True)), int(comb(n, k, exact=True))))


# pass@k

def test_pass_at_k_by_hand() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7, abs=1e-15)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 5) == 1.0
    assert pass_at_k(10, 1, 10) == 1.0


def test_pass_at_k_matches_exact_binomials_for_every_k() -> None:
    for n in range(1, 31):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(_pass_ref(n, c, k), rel=1e-12,
                                                           abs=1e-15), (n, c, k)


@pytest.mark.parametrize("n,k", [(5, 2), (10, 3), (20, 20), (50, 7)])
def test_pass_at_k_switches_to_one_where_no_k_subset_can_miss(n: int, k: int) -> None:
    assert pass_at_k(n, n - (k - 1), k) == 1.0                 # n - c == k - 1: certain
    below = pass_at_k(n, n - k, k)                             # n - c == k: one subset misses
    assert below < 1.0
    assert below == pytest.approx(1 - 1 / int(comb(n, k, exact=True)), rel=1e-12)


def test_pass_at_1_is_the_fraction_right_exactly() -> None:
    for n in range(1, 40):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == c / n


@pytest.mark.parametrize("n,c,k", [(5, 2, 0), (5, 2, 6), (5, -1, 1), (5, 6, 1), (0, 0, 1)])
def test_pass_at_k_refuses_impossible_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_mean_pass_at_1_is_the_mean_accuracy() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 7, 200, 1319):
        hits = rng.random(size) < rng.random()
        assert mean_pass_at_k(hits.astype(int), 1, 1) == float(hits.mean())  # metrics' rate
        counts = rng.integers(0, 6, size)
        assert mean_pass_at_k(counts, 5, 1) == float(counts.sum() / (5 * size))
        assert mean_fraction(counts, 5) == float(counts.sum() / (5 * size))
    assert mean_pass_at_k(np.zeros(0, dtype=int), 5, 1) == 0.0


def test_mean_pass_at_k_averages_items_and_grows_with_k() -> None:
    counts = np.random.default_rng(1).integers(0, 9, 60)
    prev = 0.0
    for k in range(1, 9):
        got = mean_pass_at_k(counts, 8, k)
        ref = np.mean([_pass_ref(8, int(c), k) for c in counts])
        assert got == pytest.approx(ref, rel=1e-12) and got >= prev
        prev = got


# majority vote and reliability

def test_a_two_two_split_goes_to_the_earliest_answer() -> None:
    assert majority(["a", "b", "b", "a"], [True, False, False, True]) == \
        Vote(right=True, tied=True, votes=2, winner=0)
    assert majority(["b", "a", "a", "b"], [False, True, True, False]) == \
        Vote(right=False, tied=True, votes=2, winner=0)
    # b and c tie at 2; b's first sample (index 1) comes before c's (index 2)
    assert majority(["a", "b", "c", "c", "b"], [True, False, True, True, False]) == \
        Vote(right=False, tied=True, votes=2, winner=1)


def test_a_clear_majority_is_not_tied() -> None:
    assert majority(["a", "b", "b", "b"], [True, False, False, False]) == \
        Vote(right=False, tied=False, votes=3, winner=1)


def test_missing_answers_do_not_vote() -> None:
    assert majority([None, "x", None], [False, True, False]) == \
        Vote(right=True, tied=False, votes=1, winner=1)
    assert majority([None, None, "x", "y"], [False, False, False, True]) == \
        Vote(right=False, tied=True, votes=1, winner=2)
    assert majority([None, None], [False, False]) == \
        Vote(right=False, tied=False, votes=0, winner=None)
    assert majority([], []) == Vote(right=False, tied=False, votes=0, winner=None)


def test_a_single_sample_and_the_winners_first_sample() -> None:
    assert majority([3], [True]) == Vote(right=True, tied=False, votes=1, winner=0)
    assert majority([3, 3], [False, True]).right is False   # the right of its first sample
    with pytest.raises(ValueError):
        majority(["a"], [True, False])


def test_all_right() -> None:
    assert all_right([True, True, True]) and not all_right([True, False, True])
    assert not all_right([])


# the sign-flip test

def _brute_p(diffs: np.ndarray) -> float:
    """P(|S| >= |s_obs|) by enumerating every one of the 2^N sign vectors."""
    mags = np.abs(diffs)
    signs = np.array(list(itertools.product((-1, 1), repeat=diffs.size)), dtype=np.int64)
    s = signs @ mags
    hits = int(np.count_nonzero(np.abs(s) >= abs(int(diffs.sum()))))
    return float(Fraction(hits, 2 ** diffs.size))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [3, 4, 5])
def test_sign_flip_p_matches_enumeration_of_every_sign_vector(seed: int, k: int) -> None:
    rng = np.random.default_rng(100 * k + seed)
    n = int(rng.integers(2, 15))
    diffs = rng.integers(-k, k + 1, n)
    if np.unique(np.abs(diffs[diffs != 0])).size < 2:  # keep the mixed-magnitude path
        diffs[:2] = [1, -2]
    assert sign_flip_p(diffs, k) == pytest.approx(_brute_p(diffs), rel=1e-12, abs=1e-15)


def test_a_skewed_case_by_enumeration_and_symmetry() -> None:
    diffs = np.array([3, 2, 3, 1, 2, 3, -1, 3, 2, 3, 1, 3, 2, 0])
    p = sign_flip_p(diffs, 3)
    assert p == pytest.approx(_brute_p(diffs), rel=1e-12) and p < 0.01
    assert sign_flip_p(-diffs, 3) == p
    assert sign_flip_p(np.concatenate([diffs, np.zeros(50, dtype=int)]), 3) == p


def test_at_k1_it_is_mcnemar() -> None:
    rng = np.random.default_rng(7)
    for n10 in range(0, 25):
        for n01 in range(0, 25):
            diffs = np.array([1] * n10 + [-1] * n01 + [0] * int(rng.integers(0, 5)))
            rng.shuffle(diffs)
            assert sign_flip_p(diffs, 1) == mcnemar_p(n10, n01), (n10, n01)
    assert sign_flip_p(np.array([1] * 900 + [-1] * 1200), 1) == mcnemar_p(900, 1200)


@pytest.mark.parametrize("m,k", [(2, 2), (2, 5), (3, 5)])
def test_one_magnitude_is_the_sign_test(m: int, k: int) -> None:
    for plus, minus in [(0, 0), (1, 0), (6, 0), (10, 2), (7, 7), (30, 11)]:
        diffs = np.array([m] * plus + [-m] * minus + [0] * 3)
        assert sign_flip_p(diffs, k) == mcnemar_p(plus, minus)


def _two_magnitudes(n1: int, n2: int, s: int) -> np.ndarray:
    """n1 items of |d| = 1 and n2 of |d| = 2 (n2 even), summing to s."""
    plus1 = (s + n1) // 2
    assert 2 * plus1 - n1 == s
    return np.array([1] * plus1 + [-1] * (n1 - plus1) + [2, -2] * (n2 // 2))


def test_the_exact_and_monte_carlo_sides_of_the_bound() -> None:
    t = (EXACT_SUPPORT_UP_TO - 1) // 2
    at = _two_magnitudes(t - 20000, 10000, 400)                     # support == the bound
    assert 2 * int(np.abs(at).sum()) + 1 == EXACT_SUPPORT_UP_TO
    exact = sign_flip_p(at, 2)                                      # no Generator: exact
    assert 0.03 < exact < 0.2
    over = _two_magnitudes(t - 20000 + 1, 10000, 401)               # one more: Monte Carlo
    with pytest.raises(ValueError, match="needs rng_for_mc"):
        sign_flip_p(over, 2)
    mc = sign_flip_p(over, 2, np.random.default_rng(5))
    assert mc == sign_flip_p(over, 2, np.random.default_rng(5))     # reproducible
    ref = _exact_p(np.array([t - 20000 + 1, 10000]), 401)
    # MC_DRAWS = 1e5 draws: standard error <= 0.0012 near p ~ 0.07; 0.006 is 5 of them
    assert MC_DRAWS == 100_000 and abs(mc - ref) < 0.006
    assert (mc * (1 + MC_DRAWS)) == pytest.approx(round(mc * (1 + MC_DRAWS)), abs=1e-6)


def test_monte_carlo_p_never_reaches_zero() -> None:
    t = (EXACT_SUPPORT_UP_TO - 1) // 2
    over = np.array([1] * (t - 20000 + 1) + [2] * 10000)            # all one way
    assert sign_flip_p(over, 2, np.random.default_rng(0), draws=999) == 1 / 1000


def test_sign_flip_p_refuses_out_of_range_differences() -> None:
    for bad in (np.array([1, -4]), np.array([0.5, 1.0])):
        with pytest.raises(ValueError, match="differences must be integers"):
            sign_flip_p(bad, 3)
    assert sign_flip_p(np.array([], dtype=int), 3) == 1.0


# the cluster bootstrap

def test_at_k1_the_cis_are_rate_ci_and_delta_ci() -> None:
    data = np.random.default_rng(11)
    for seed, n in [(0, 1), (1, 17), (42, 200), (7, 1319)]:
        a = (data.random(n) < 0.4).astype(int)
        b = (data.random(n) < 0.6).astype(int)
        assert fraction_ci(a, 1, np.random.default_rng(seed), 2000) == \
            rate_ci(a.astype(bool), np.random.default_rng(seed), 2000)
        assert fraction_delta_ci(a, b, 1, np.random.default_rng(seed), 2000) == \
            delta_ci(a.astype(bool), b.astype(bool), np.random.default_rng(seed), 2000)
    # at a rate of exactly 1/2 a two-category Multinomial draws n - Binomial: not rate_ci's
    half = np.tile([0, 1], 20)
    assert fraction_ci(half, 1, np.random.default_rng(0), 2000) == \
        rate_ci(half.astype(bool), np.random.default_rng(0), 2000)


def test_samples_of_an_item_stay_together() -> None:
    half = np.ones(100, dtype=int)                                  # k = 2, one right each
    assert fraction_ci(half, 2, np.random.default_rng(0), 2000) == (0.5, 0.5)
    flat = np.tile([True, False], 100)                              # the same samples, loose
    lo, hi = rate_ci(flat, np.random.default_rng(0), 2000)
    assert lo < 0.45 and hi > 0.55
    assert fraction_delta_ci(half, half + 1, 2, np.random.default_rng(0), 2000) == (0.5, 0.5)


def _loop_ci(values: np.ndarray, rng: np.random.Generator, b: int) -> tuple[float, float]:
    n = values.size
    means = np.array([values[rng.integers(0, n, n)].mean() for _ in range(b)])
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def test_k5_agrees_with_a_per_resample_loop() -> None:
    rng = np.random.default_rng(3)
    before = rng.binomial(5, rng.random(200))
    after = np.clip(before + rng.integers(-1, 3, 200), 0, 5)
    fast = fraction_ci(before, 5, np.random.default_rng(1), 20000)
    slow = _loop_ci(before / 5, np.random.default_rng(2), 5000)
    assert abs(fast[0] - slow[0]) <= 0.02 and abs(fast[1] - slow[1]) <= 0.02
    fast = fraction_delta_ci(before, after, 5, np.random.default_rng(1), 20000)
    slow = _loop_ci((after - before) / 5, np.random.default_rng(2), 5000)
    assert abs(fast[0] - slow[0]) <= 0.02 and abs(fast[1] - slow[1]) <= 0.02
    assert fast[0] > 0


def test_bootstrap_edges() -> None:
    empty = np.zeros(0, dtype=int)
    assert fraction_ci(empty, 3, np.random.default_rng(0), 10) == (0.0, 0.0)
    assert fraction_delta_ci(empty, empty, 3, np.random.default_rng(0), 10) == (0.0, 0.0)
    with pytest.raises(ValueError, match="right counts"):
        fraction_ci(np.array([0, 4]), 3, np.random.default_rng(0), 10)
    with pytest.raises(ValueError, match="items before"):
        fraction_delta_ci(np.array([1]), np.array([1, 2]), 3, np.random.default_rng(0), 10)
