"""Figures of k samples per item and arm: per arm, the mean fraction right, pass@k' for
every k' <= k, the majority vote, all-k, validity and wrong-but-valid per sample and the
tax over every sample; per comparison of arms, the paired sign-flip test on per-item
fractions (vbw.score.sampled). The per-sample states are the Tally's (`s_valid`,
`s_right`, `s_tax`, `vote`).

Each arm and comparison draws its CIs from the stream of its own key (key_rng), in the
order the one-sample report draws them (validity, accuracy, wrong-but-valid), so at k = 1
every shared figure equals the one-sample report's to the bit; a Monte Carlo sign-flip
test draws from a stream of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vbw.score.bootstrap import bounds, key_rng, rate_ci
from vbw.score.pairs import comparison_key, comparison_pairs, role_of
from vbw.score.results import Rate, Sampled, SampledArm, SampledComparison, SampledDelta
from vbw.score.sampled import (EXACT_SUPPORT_UP_TO, MC_DRAWS, VOTE_RIGHT, VOTE_TIED,
                               fraction_ci, fraction_delta_ci, mean_fraction, pass_at_k,
                               sign_flip_p)
from vbw.score.tax import summarise_tax
from vbw.task.arms import Arm

MC_KEY = "sign-flip "  # + the comparison's key: the Monte Carlo test's stream


def _columns(valid: np.ndarray, right: np.ndarray, arm: Arm) -> dict[str, np.ndarray]:
    """Per metric, each item's count of samples holding it (0..k), in the order of
    vbw.score.metrics.metric_columns."""
    counts = {"answer_accuracy": right.sum(axis=1)}
    if not arm.has_contract:
        return counts
    ok = valid == 1
    return {"schema_validity": ok.sum(axis=1), **counts,
            "wrong_but_valid": (ok & ~right).sum(axis=1)}


def _count_ci(counts: np.ndarray, values: np.ndarray, rng: np.random.Generator,
              resamples: int) -> tuple[float, float]:
    """CI of the mean over items of values[count], resampling items (Multinomial over
    the k + 1 counts), as fraction_ci draws."""
    n = int(counts.size)
    if n == 0:
        return (0.0, 0.0)
    shares = np.bincount(counts, minlength=values.size) / n
    return bounds(rng.multinomial(n, shares, size=resamples) @ values / n, 0.95)


def _pass_at(counts: np.ndarray, k: int, rng: np.random.Generator,
             resamples: int) -> dict[str, Rate]:
    """pass@k' for k' = 2..k: the mean of each item's unbiased estimate, and its CI."""
    out = {}
    for kk in range(2, k + 1):
        values = np.array([pass_at_k(k, c, kk) for c in range(k + 1)])
        rate = float(values[counts].mean()) if counts.size else 0.0
        out[str(kk)] = Rate(rate=rate, ci95=_count_ci(counts, values, rng, resamples))
    return out


def sampled_arm(valid: np.ndarray, right: np.ndarray, vote: np.ndarray, arm: Arm,
                rng: np.random.Generator, resamples: int) -> SampledArm:
    """One arm's figures from its (items, k) validity and correctness and its votes."""
    n, k = right.shape
    cols = _columns(valid, right, arm)
    rates = {m: Rate(rate=mean_fraction(c, k), ci95=fraction_ci(c, k, rng, resamples))
             for m, c in cols.items()}
    accuracy = rates["answer_accuracy"]
    passes = {"1": accuracy, **_pass_at(cols["answer_accuracy"], k, rng, resamples)}
    won = (vote & VOTE_RIGHT).astype(bool)
    every = right.all(axis=1)
    return SampledArm(
        n=n, accuracy=accuracy, pass_at=passes,
        majority=Rate(rate=float(won.mean()) if n else 0.0,
                      ci95=rate_ci(won, rng, resamples)),
        majority_tied=int(np.count_nonzero(vote & VOTE_TIED)),
        all_right=Rate(rate=float(every.mean()) if n else 0.0,
                       ci95=rate_ci(every, rng, resamples)),
        schema_validity=rates.get("schema_validity"),
        wrong_but_valid=rates.get("wrong_but_valid"))


def sampled_delta(before: np.ndarray, after: np.ndarray, k: int, rng: np.random.Generator,
                  resamples: int, mc_rng: np.random.Generator) -> SampledDelta:
    """One metric's paired comparison from each item's count (0..k) in either arm."""
    diffs = after.astype(np.int64) - before.astype(np.int64)
    lo, hi = fraction_delta_ci(before, after, k, rng, resamples)
    n = int(diffs.size)
    return SampledDelta(delta=mean_fraction(after, k) - mean_fraction(before, k) if n else 0.0,
                        ci95=(lo, hi), more=int((diffs > 0).sum()),
                        fewer=int((diffs < 0).sum()), p=sign_flip_p(diffs, k, mc_rng),
                        test=which_test(diffs))


def which_test(diffs: np.ndarray) -> str:
    """Which test sign_flip_p runs on these per-item differences (SampledDelta.test)."""
    if np.unique(np.abs(diffs[diffs != 0])).size <= 1:
        return "mcnemar"
    return "exact" if 2 * int(np.abs(diffs).sum()) + 1 <= EXACT_SUPPORT_UP_TO else "monte_carlo"


def sampled_figures(st: Any, seed: int, resamples: int) -> Sampled | None:
    """report.json's `samples` from ItemStates with k > 1 samples (None: one sample)."""
    if getattr(st, "s_right", None) is None:
        return None
    return figures(st.arms, st.s_valid, st.s_right, st.vote, st.s_tax, seed, resamples)


def figures(arms: list[Arm], valid: np.ndarray, right: np.ndarray, vote: np.ndarray,
            tax: np.ndarray | None, seed: int, resamples: int) -> Sampled:
    """The sampled figures from (items, arms, k) validity, correctness and tax and the
    (items, arms) vote codes; k = 1 included (the reduction tests use it).

    Args:
        arms: the scored arms, in the columns' order.
        valid: 1/0 per sample, -1 where the arm has no contract.
        right: per sample.
        vote: vbw.score.sampled.vote_code per item and arm.
        tax: nats per sample, NaN where not recorded (None: none recorded).
        seed: bootstrap.seed (each arm and comparison derives its own stream).
        resamples: bootstrap.resamples.
    Returns:
        The `samples` section of report.json.
    """
    k = right.shape[2]
    out_arms = {}
    for j, a in enumerate(arms):
        fig = sampled_arm(valid[:, j], right[:, j], vote[:, j], a, key_rng(seed, a.key),
                          resamples)
        out_arms[a.key] = fig
    taxes = _tax(arms, valid, right, tax)
    for key, t in taxes.items():
        out_arms[key] = out_arms[key].model_copy(update={"tax": t})
    comps = []
    for a, b, kind in comparison_pairs(arms):
        i, j = arms.index(a), arms.index(b)
        ca, cb = _columns(valid[:, i], right[:, i], a), _columns(valid[:, j], right[:, j], b)
        key = comparison_key(a.key, b.key)
        rng, mc = key_rng(seed, key), key_rng(seed, MC_KEY + key)
        comps.append(SampledComparison(
            from_=a.key, to=b.key, n=int(right.shape[0]), role=role_of(a, b, kind), kind=kind,
            deltas={m: sampled_delta(ca[m], cb[m], k, rng, resamples, mc)
                    for m in ca if m in cb}))
    return Sampled(k=k, arms=out_arms, comparisons=comps,
                   monte_carlo={"draws": MC_DRAWS, "exact_up_to": EXACT_SUPPORT_UP_TO,
                                "seed": f"bootstrap.seed with the key '{MC_KEY}<from> -> <to>'"})


def paired_fractions(before: np.ndarray, k_before: int, after: np.ndarray, k_after: int,
                     rng: np.random.Generator, resamples: int,
                     mc_rng: np.random.Generator) -> SampledDelta:
    """sampled_delta for two runs of the same items with k_before and k_after samples
    (mode=compare: a greedy replay against a sampled one): per item the difference of
    fractions, as the integer after*k_before - before*k_after over k_before*k_after; the
    sign-flip test is unchanged by that scale, the CI resamples items over its values."""
    if k_before == k_after:
        return sampled_delta(before, after, k_after, rng, resamples, mc_rng)
    scale = k_before * k_after
    diffs = after.astype(np.int64) * k_before - before.astype(np.int64) * k_after
    n = int(diffs.size)
    lo, hi = _count_ci(diffs + scale, np.arange(-scale, scale + 1) / scale, rng, resamples) \
        if n else (0.0, 0.0)
    return SampledDelta(delta=mean_fraction(after, k_after) - mean_fraction(before, k_before)
                        if n else 0.0, ci95=(lo, hi), more=int((diffs > 0).sum()),
                        fewer=int((diffs < 0).sum()), p=sign_flip_p(diffs, scale, mc_rng),
                        test=which_test(diffs))


def counts_of(st: Any, j: int) -> tuple[dict[str, np.ndarray], int]:
    """Arm column j's per-item counts per metric (vbw.score.metrics' order) and k: over
    the k samples of a sampled replay's states, else each item's 0/1."""
    arm = st.arms[j]
    if getattr(st, "s_right", None) is None:
        return _columns(st.valid[:, j, None], st.right[:, j, None], arm), 1
    return _columns(st.s_valid[:, j], st.s_right[:, j], arm), int(st.s_right.shape[2])


def _tax(arms: list[Arm], valid: np.ndarray, right: np.ndarray,
         tax: np.ndarray | None) -> dict[str, Any]:
    """The tax over every sample, by each sample's outcome (vbw.score.tax)."""
    if tax is None or np.isnan(tax).all():
        return {}
    flat = [np.moveaxis(x, 2, 1).reshape(-1, len(arms)) for x in (tax, valid, right)]
    return summarise_tax(*flat[:1], arms, flat[1], flat[2])
