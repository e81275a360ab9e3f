"""The bundled Qwen2.5-0.5B replays, scored through the real `vbw` entry point, reproduce the
predecessor's published reports: rates, quadrants, deltas, transitions, flips and the
ledger exactly; CI bounds within 1.5 points (the resampling RNG differs), and so whether a
delta's CI excludes 0 wherever the published interval is clear of 0 by more than that."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REFERENCE, ROOT, load_json, run_vbw

CI_TOL = 0.015
EXACT = 1e-9


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo")
    proc = run_vbw(f"hydra.run.dir={out}", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


@pytest.mark.parametrize("task", ["bfcl_simple", "gsm8k"])
def test_reproduces_reference(demo_run: tuple[Path, str], task: str) -> None:
    out, _ = demo_run
    ref = load_json(REFERENCE / f"{task}.report.json")
    got = load_json(out / task / "report.json")
    assert got["n"] == ref["n"] == 200
    assert got["excluded"]["n"] == ref["excluded"]["n"]
    assert list(got["arms"]) == list(ref["arms"])
    for arm, r in ref["arms"].items():
        g = got["arms"][arm]
        assert g["quadrant"] == r["quadrant"], arm
        for metric in ("schema_validity", "answer_accuracy", "wrong_but_valid"):
            if r[metric] is None:
                assert g[metric] is None, (arm, metric)
                continue
            assert abs(g[metric]["rate"] - r[metric]["rate"]) < EXACT, (arm, metric)
            for gb, rb in zip(g[metric]["ci95"], r[metric]["ci95"]):
                assert abs(gb - rb) <= CI_TOL, (arm, metric, g[metric], r[metric])
    assert [(c["from"], c["to"]) for c in got["comparisons"]] == \
        [(c["from"], c["to"]) for c in ref["comparisons"]]
    for g, r in zip(got["comparisons"], ref["comparisons"]):
        assert g["transitions"] == r["transitions"]
        assert g["flips"] == r["flips"]
        assert g["role"] == r["role"]
        assert list(g["deltas"]) == list(r["deltas"])
        for metric, rd in r["deltas"].items():
            gd = g["deltas"][metric]
            assert abs(gd["delta"] - rd["delta"]) < EXACT, (g["from"], g["to"], metric)
            lo, hi = gd["ci95"]
            assert gd["excludes_0"] == (lo > 0 or hi < 0), (g["from"], g["to"], metric)
            if min(abs(b) for b in rd["ci95"]) > CI_TOL:  # else 0 is within the tolerance
                assert gd["excludes_0"] == rd["excludes_0"], (g["from"], g["to"], metric)
            for gb, rb in zip(gd["ci95"], rd["ci95"]):
                assert abs(gb - rb) <= CI_TOL, (g["from"], g["to"], metric)
    assert got["ledger"] == ref["ledger"]


def test_demo_prints_both_tables_in_order(demo_run: tuple[Path, str]) -> None:
    out, stdout = demo_run
    bfcl, gsm = stdout.index("vbw report: bfcl_simple"), stdout.index("vbw report: gsm8k")
    assert bfcl < gsm
    assert "| `constrained[arguments]` | 100.0% [100.0%, 100.0%] | 80.5%" in stdout
    assert "answer accuracy: +5.5 pts observed; not distinguishable from zero at N=200 " \
        "(p=0.071, MDE ±" in stdout
    assert stdout.strip().splitlines()[-1] == (f"Reports written to {out}: report.json, "
        "report.md, report.html, quadrants.svg, ledger.csv, answers.csv (in each task's folder)")
    for task in ("bfcl_simple", "gsm8k"):
        for name in ("report.json", "report.md", "report.html", "quadrants.svg", "ledger.csv",
                     "answers.csv"):
            assert (out / task / name).stat().st_size > 0, (task, name)
