"""k samples per item at scoring (vbw.score.samples): at k = 1 every figure equals the
one-sample report's, on every committed replay; per-sample scoring, the vote and pass@k
re-derived independently from a sampled replay; the item bootstrap keeps an item's
samples together."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from tests.conftest import ROOT, TASK_CONF
from vbw.replay.stream import open_replay
from vbw.score.metrics import build_report
from vbw.score.samples import figures, sampled_arm
from vbw.score.sampled import VOTE_RIGHT
from vbw.score.stream import score_stream
from vbw.task.arms import ARM_KINDS, parse_arm, task_arms
from vbw.task.runner import load_task

COMMITTED = sorted((ROOT / "replays").glob("*/*/*.jsonl"))


def _score(path: Path, n: int | None = None):
    stream = open_replay(path)
    task = load_task(TASK_CONF / f"{path.parts[-3]}.yaml")
    arms = [parse_arm(k) for k in stream.header.arms] if stream.header.arms else \
        task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    scored = score_stream(task, stream, arms, n, io.StringIO())
    return scored.states, build_report(
        scored.states, task=task.name, label="x", mode="replay", meta={}, source="s",
        provenance="p", seed=42, resamples=400, n_task=len(scored.states.ids)
        + len(scored.states.excluded) + len(scored.missing), missing=scored.missing)


@pytest.mark.parametrize("path", [p for p in COMMITTED if "-k5" not in p.name],
                         ids=lambda p: "/".join(p.parts[-3:]))
def test_one_sample_reduces_to_the_one_sample_report(path: Path) -> None:
    st, report = _score(path)
    assert report.samples is None  # a one-sample replay reports as it always has
    one = figures(st.arms, st.valid[:, :, None], st.right[:, :, None],
                  (st.right * VOTE_RIGHT).astype(np.int8), None, 42, 400)
    for key, arm in report.arms.items():
        got = one.arms[key]
        assert got.accuracy == arm.answer_accuracy == got.pass_at["1"]
        assert (got.schema_validity, got.wrong_but_valid) == (arm.schema_validity,
                                                              arm.wrong_but_valid)
        assert got.majority.rate == got.all_right.rate == arm.answer_accuracy.rate
    for mine, theirs in zip(one.comparisons, report.comparisons, strict=True):
        assert (mine.from_, mine.to, mine.kind) == (theirs.from_, theirs.to, theirs.kind)
        assert mine.deltas.keys() == theirs.deltas.keys()
        for m, d in theirs.deltas.items():
            s = mine.deltas[m]
            assert (s.delta, s.ci95, s.p, s.effect) == (d.delta, d.ci95, d.mcnemar_p, d.effect)
            assert (s.more, s.fewer, s.test) == (d.n01, d.n10, "mcnemar")


def _sampled_replay(tmp_path: Path, k: int = 3, n: int = 12) -> Path:
    """The first n items of a committed GSM8K replay as k samples each: sample i of an
    arm is the arm's own text, or another arm's (so samples disagree), by a rule."""
    lines = (ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])["meta"]
    meta.update(format="vbw-replay/2", decoding={**meta["decoding"], "samples": k})
    keys = meta["arms"]
    out = [json.dumps({"meta": meta})]
    for idx, line in enumerate(lines[1:n + 1]):
        rec = json.loads(line)
        arms = rec["arms"]
        def sample(i: int) -> dict:
            return {key: {**arms[key], "text": arms[keys[(j + i * (idx % 3)) % len(keys)]]["text"],
                          **({"tax": 0.5 * i + idx} if key.startswith("constrained") else {})}
                    for j, key in enumerate(keys)}
        rec["arms"] = sample(0)
        rec["samples"] = [sample(i) for i in range(1, k)]
        out.append(json.dumps(rec))
    path = tmp_path / "gsm8k" / "m" / "k.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(out) + "\n")
    return path


def test_every_sample_is_scored_and_the_figures_rederive(tmp_path: Path) -> None:
    k, n = 3, 12
    path = _sampled_replay(tmp_path, k, n)
    st, report = _score(path, n)
    task = load_task(TASK_CONF / "gsm8k.yaml")
    recs = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    assert report.samples is not None and report.samples.k == k
    for j, arm in enumerate(st.arms):
        right = np.zeros((n, k), dtype=bool)
        for i, rec in enumerate(recs):
            item = task.item(i, rec["id"])
            for s, arms in enumerate([rec["arms"], *rec["samples"]]):
                answer = task.reader(arms[arm.key]["text"], item, arm.kind == "unconstrained",
                                     False)[2]
                right[i, s] = answer is not None and task.is_correct(answer, item)
        assert (st.s_right[:, j, :] == right).all()
        fig = report.samples.arms[arm.key]
        assert fig.accuracy.rate == right.sum() / (n * k)
        c = right.sum(axis=1)
        for kk in range(1, k + 1):  # pass@k' by the binomial coefficients themselves
            want = np.mean([1 - math.comb(k - ci, kk) / math.comb(k, kk) for ci in c])
            assert fig.pass_at[str(kk)].rate == pytest.approx(want, abs=1e-12)
        assert fig.all_right.rate == right.all(axis=1).mean()
    tax = report.samples.arms["constrained[answer]"].tax
    assert tax.all.items == n * k
    assert tax.all.mean == round(np.mean([0.5 * s + i for i in range(n) for s in range(k)]), 6)


def _compared(before: list[int], after: list[int], k: int = 3):
    right = np.zeros((len(before), 2, k), dtype=bool)
    for i, (b, a) in enumerate(zip(before, after)):
        right[i, 0, :b], right[i, 1, :a] = True, True
    arms = [parse_arm("prompt_json[s]"), parse_arm("constrained[s]")]
    got = figures(arms, np.ones_like(right, dtype=np.int8), right,
                  np.zeros((len(before), 2), np.int8), None, 1, 200)
    return got.comparisons[0].deltas["answer_accuracy"]


def test_the_sign_flip_p_is_mcnemar_at_one_size_and_exact_beyond() -> None:
    # one size of difference: the two-sided binomial test on its signs (scipy)
    d = _compared([0, 0, 0, 3, 0, 0, 0], [3, 3, 3, 0, 3, 0, 0])
    assert (d.more, d.fewer, d.test) == (4, 1, "mcnemar")
    assert d.p == pytest.approx(binomtest(4, 5).pvalue, abs=1e-12)
    # sizes 1, 2 and 3: the share of the 2^6 sign flips whose |sum| reaches the observed
    before, after = [0, 1, 0, 3, 0, 2, 1], [1, 3, 3, 2, 2, 2, 3]
    diffs = np.subtract(after, before)
    flips = [abs(sum(s * x for s, x in zip(signs, diffs)))
             for signs in np.array(np.meshgrid(*[[-1, 1]] * 7)).reshape(7, -1).T]
    d = _compared(before, after)
    assert d.test == "exact" and (d.more, d.fewer) == (5, 1)
    assert d.p == pytest.approx(np.mean(np.array(flips) >= abs(diffs.sum())), abs=1e-12)
    assert d.effect is (d.p < 0.05)


def test_the_bootstrap_resamples_items_not_samples() -> None:
    # every item has all k samples right or none
    n, k = 10, 4
    right = np.zeros((n, k), dtype=bool)
    right[:6] = True
    arm = parse_arm("constrained[s]")
    rng = np.random.default_rng(3)
    fig = sampled_arm(np.ones((n, k), np.int8), right, np.zeros(n, np.int8), arm, rng, 2000)
    lo, hi = fig.accuracy.ci95
    # items resampled: Binomial(10, 0.6)/10, a 95% interval 0.6 wide; samples resampled
    # alone would be Binomial(40, 0.6)/40, half as wide
    assert lo <= 0.3 and hi >= 0.9


def test_a_sampled_replay_reports_every_sample(tmp_path: Path) -> None:
    import csv

    from tests.conftest import run_vbw
    k, n = 3, 12
    path = _sampled_replay(tmp_path, k, n)
    out = tmp_path / "out"
    proc = run_vbw("task=gsm8k", f"replay={path}", f"n={n}", "outputs=[json,md,html,csv]",
                   f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    with open(out / "answers.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    arms = report["meta"]["arms"]
    assert len(rows) == n * k * len(arms)
    assert [r["sample"] for r in rows[:len(arms) * k]] == \
        [str(s) for s in range(1, k + 1) for _ in arms]
    recs = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    # each row's right flag is that sample's, as the report's per-arm mean counts it
    for key in arms:
        mine = [r for r in rows if r["arm"] == key]
        assert sum(r["right"] == "1" for r in mine) / (n * k) == \
            report["samples"]["arms"][key]["accuracy"]["rate"]
        tokens = [str(s[key].get("n_tokens", "")) for rec in recs
                  for s in [rec["arms"], *rec["samples"]]]
        assert [r["output_tokens"] for r in mine] == tokens
    md = (out / "report.md").read_text()
    assert f"## {k} samples per item and arm" in md and "## Sample 1: metrics per arm" in md
    assert '<section id="samples">' in (out / "report.html").read_text()


def test_greedy_against_sampled_pairs_fractions_of_different_k() -> None:
    from vbw.score.samples import paired_fractions
    greedy = np.array([1, 0, 0, 1, 0, 0, 1, 0])  # k = 1
    sampled = np.array([3, 1, 2, 0, 0, 3, 2, 1])  # k = 3
    d = paired_fractions(greedy, 1, sampled, 3, np.random.default_rng(0), 500,
                         np.random.default_rng(1))
    diffs = sampled / 3 - greedy
    assert d.delta == pytest.approx(diffs.mean(), abs=1e-12)
    assert (d.more, d.fewer) == ((diffs > 0).sum(), (diffs < 0).sum())
    nz = diffs[diffs != 0]
    flips = [abs(sum(s * x for s, x in zip(signs, nz)))
             for signs in np.array(np.meshgrid(*[[-1, 1]] * nz.size)).reshape(nz.size, -1).T]
    assert d.p == pytest.approx(np.mean(np.array(flips) >= abs(nz.sum()) - 1e-9), abs=1e-12)
    lo, hi = d.ci95
    assert lo < d.delta < hi


def test_compare_reads_k_and_pairs_the_fractions(tmp_path: Path) -> None:
    from tests.conftest import run_vbw
    k, n = 3, 12
    path = _sampled_replay(tmp_path, k, n)
    greedy = ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl"
    proc = run_vbw("mode=compare", "task=gsm8k", f"replays=[{greedy},{path}]", f"n={n}",
                   "outputs=[json,md]", f"hydra.run.dir={tmp_path / 'c'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "c/report.json").read_text())
    assert [s.get("samples", 1) for s in report["replays"]] == [1, k]
    st1, _ = _score(greedy, n)
    stk, _ = _score(path, n)
    for j, arm in enumerate(st1.arms):
        m = report["comparisons"][0]["arms"][arm.key]["metrics"]["answer_accuracy"]
        assert m["rate_from"] == st1.right[:, j].mean()
        assert m["rate_to"] == stk.s_right[:, j].sum() / (n * k)
        assert m["delta"]["test"] in ("mcnemar", "exact")
    assert "samples per item and arm" in (tmp_path / "c/report.md").read_text()
