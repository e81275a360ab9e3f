"""The count-based bootstrap agrees with a naive resample-the-items bootstrap, and every
CI vbw writes follows from the recipe docs/reference/scoring.md states, reimplemented here
from its words."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.modes.compare import compare_replays
from vbw.report.compare import write_compare
from vbw.score.bootstrap import delta_ci, rate_ci
from vbw.task.arms import ARM_KINDS
from vbw.task.runner import load_task


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


# The recipe of docs/reference/scoring.md ("The bootstrap, bit for bit"), written from the
# doc's words alone: numpy and hashlib, none of vbw's scoring functions. vbw only scores
# the committed replays; every interval it wrote must come out of these lines exactly.
DOC_METRICS = ("schema_validity", "answer_accuracy", "wrong_but_valid")
GSM8K = ("replays/gsm8k/smollm2_135m/outlines.jsonl",
         "replays/gsm8k/smollm2_135m/llamacpp.jsonl")


def _doc_stream(seed: int, key: str) -> np.random.Generator:
    d = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence([seed, d]))


def _doc_bounds(draws: np.ndarray) -> list[float]:
    q = (1.0 - 0.95) / 2.0
    lo, hi = np.quantile(draws, [q, 1.0 - q])
    return [round(float(lo), 10), round(float(hi), 10)]


def _doc_rate(v: np.ndarray, rng: np.random.Generator, r: int) -> list[float]:
    n, k = len(v), int(v.sum())
    return [0.0, 0.0] if n == 0 else _doc_bounds(rng.binomial(n, k / n, size=r) / n)


def _doc_delta(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, r: int) -> list[float]:
    n = len(a)
    if n == 0:
        return [0.0, 0.0]
    diff = b.astype(int) - a.astype(int)
    c = np.array([(diff == -1).sum(), (diff == 0).sum(), (diff == 1).sum()])
    m = rng.multinomial(n, c / n, size=r)
    return _doc_bounds((m[:, 2] - m[:, 0]) / n)


def _doc_vectors(ledger: list[dict[str, str]], arm: str) -> dict[str, np.ndarray]:
    """The arm's 0/1 vectors from the ledger's states, in the doc's drawing order."""
    states = [row[arm] for row in ledger]
    valid = np.array([s.startswith("valid/") for s in states])
    right = np.array([s.endswith("/right") for s in states])
    if arm == "unconstrained":
        return {"answer_accuracy": right}
    return dict(zip(DOC_METRICS, (valid, right, valid & ~right)))


def _scored(tmp: Path, replay: str) -> dict:
    """vbw's report.json of a committed replay, every arm, default bootstrap."""
    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": list(ARM_KINDS),
                 "max_tokens": {"free": 1, "json": 1, "package": 1}}, "mode": "replay",
        "outputs": ["json"], "replay": str(ROOT / replay)})
    assert run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp, tmp, io.StringIO(),
               io.StringIO()) == 0
    return json.loads((tmp / "report.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def gsm8k_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, dict]:
    """The two SmolLM2 GSM8K replays' report.json, and mode=compare's of the pair."""
    a = _scored(tmp_path_factory.mktemp("boot_a"), GSM8K[0])
    b = _scored(tmp_path_factory.mktemp("boot_b"), GSM8K[1])
    out = tmp_path_factory.mktemp("boot_cmp")
    write_compare(compare_replays(load_task(TASK_CONF / "gsm8k.yaml"),
                                  [ROOT / p for p in GSM8K], list(GSM8K),
                                  kinds=list(ARM_KINDS), n=None, allow_task_change=False,
                                  seed=42, resamples=2000, err=io.StringIO()), out, ["json"])
    return a, b, json.loads((out / "report.json").read_text("utf-8"))


def test_every_ci_of_a_report_follows_from_the_documented_recipe(
        gsm8k_reports: tuple[dict, dict, dict]) -> None:
    for rep in gsm8k_reports[:2]:
        seed, r, ledger = rep["bootstrap"]["seed"], rep["bootstrap"]["resamples"], rep["ledger"]
        checked = 0
        for arm, metrics in rep["arms"].items():
            rng = _doc_stream(seed, arm)
            for m, v in _doc_vectors(ledger, arm).items():
                assert _doc_rate(v, rng, r) == metrics[m]["ci95"], (arm, m)
                checked += 1
            assert [m for m in DOC_METRICS if metrics[m] is not None] == \
                list(_doc_vectors(ledger, arm))  # no CI the recipe does not draw
        for c in rep["comparisons"]:
            rng = _doc_stream(seed, f"{c['from']} -> {c['to']}")
            a, b = _doc_vectors(ledger, c["from"]), _doc_vectors(ledger, c["to"])
            both = [m for m in a if m in b]
            assert list(c["deltas"]) == both, (c["from"], c["to"])
            for m in both:
                assert _doc_delta(a[m], b[m], rng, r) == c["deltas"][m]["ci95"], (c["to"], m)
                checked += 1
        assert rep["n"] == 200 and checked == 16 + 9  # 6 arms, 2 headline + 3 secondary


def test_every_ci_of_mode_compare_follows_from_the_documented_recipe(
        gsm8k_reports: tuple[dict, dict, dict]) -> None:
    a, b, cmp = gsm8k_reports
    shas = [hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in GSM8K]
    rows_a = {row["id"]: row for row in a["ledger"]}
    rows_b = {row["id"]: row for row in b["ledger"]}
    paired = [i for i in rows_a if i in rows_b]
    assert cmp["n"] == len(paired)
    [c] = cmp["comparisons"]
    checked = 0
    for arm, pair in c["arms"].items():
        rng = _doc_stream(cmp["bootstrap"]["seed"], f"compare {arm}: {shas[0]} -> {shas[1]}")
        va = _doc_vectors([rows_a[i] for i in paired], arm)
        vb = _doc_vectors([rows_b[i] for i in paired], arm)
        assert list(pair["metrics"]) == list(va), arm
        for m in va:
            assert _doc_delta(va[m], vb[m], rng, cmp["bootstrap"]["resamples"]) == \
                pair["metrics"][m]["delta"]["ci95"], (arm, m)
            checked += 1
    assert checked == 16
