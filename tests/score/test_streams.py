"""An arm's CI, and a comparison's, depend only on the seed and its own key: scoring it
alone, with the headline pair, or with every arm gives the same bounds, in any process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from tests.conftest import ROOT
from vbw.score.metrics import build_report
from vbw.score.results import Report
from vbw.score.states import ItemStates
from vbw.task.arms import parse_arm

ARMS = ["unconstrained", "prompt_json[s]", "constrained[s]", "reason_then_constrain[s]"]
HEAD = ("prompt_json[s]", "constrained[s]")


def _states(arms: list[str]) -> ItemStates:
    """200 random items over ARMS, then only the columns of `arms` (in ARMS order)."""
    rng = np.random.default_rng(11)
    valid = (rng.random((200, 4)) < [0, 0.4, 0.95, 0.9]).astype(np.int8)
    valid[:, 0] = -1
    right = rng.random((200, 4)) < [0.45, 0.3, 0.6, 0.7]
    cols = [ARMS.index(a) for a in arms]
    return ItemStates(ids=[f"i{k}" for k in range(200)], arms=[parse_arm(a) for a in arms],
                      valid=valid[:, cols],
                      right=right[:, cols], excluded=[], excluded_reasons={})


def _report(arms: list[str], seed: int = 42) -> Report:
    return build_report(_states(arms), task="t", label="acc", mode="replay", meta={},
                        source="x", provenance="p", seed=seed, resamples=500, n_task=200,
                        missing=[])


def _cis(r: Report) -> dict[str, dict]:
    arms = {k: m.model_dump() for k, m in r.arms.items()}
    comps = {f"{c.from_} -> {c.to}": {m: d.ci95 for m, d in c.deltas.items()}
             for c in r.comparisons}
    return {**arms, **comps}


def test_arm_ci_does_not_depend_on_the_other_arms() -> None:
    everything = _cis(_report(ARMS))
    for subset in (["constrained[s]"], list(HEAD), ["unconstrained", "constrained[s]"],
                   ["prompt_json[s]", "reason_then_constrain[s]"]):
        got = _cis(_report(subset))
        for key in subset:
            assert got[key] == everything[key], (subset, key)


def test_comparison_ci_does_not_depend_on_the_other_arms() -> None:
    everything = _cis(_report(ARMS))
    pair = _cis(_report(list(HEAD)))
    head = "prompt_json[s] -> constrained[s]"
    assert pair[head] == everything[head]
    secondary = _cis(_report(["unconstrained", "constrained[s]"]))
    assert secondary["unconstrained -> constrained[s]"] == \
        everything["unconstrained -> constrained[s]"]
    assert len(everything[head]) == 3


def test_the_seed_still_moves_the_bounds() -> None:
    a, b = _report(ARMS, seed=42), _report(ARMS, seed=43)
    assert any(a.arms[k].answer_accuracy.ci95 != b.arms[k].answer_accuracy.ci95 for k in ARMS)


def test_streams_do_not_depend_on_the_process_hash_seed() -> None:
    code = ("from tests.score.test_streams import _report, _cis; "
            "print(sorted(_cis(_report(['prompt_json[s]', 'constrained[s]'])).items()))")
    outs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                           text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1
