"""What each arm cost (vbw.score.cost): every committed replay's report.json `cost`
re-derived here from the replay's lines alone (statistics, no vbw scoring code), a figure
none recorded said as None (never 0), and a reusing arm charged the arm it reuses."""

from __future__ import annotations

import io
import json
import math
import statistics
from pathlib import Path

import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.replay.stream import open_replay
from vbw.score.cost import summarise_cost
from vbw.score.metrics import build_report
from vbw.score.stream import score_stream
from vbw.task.arms import ARM_KINDS, parse_arm, task_arms
from vbw.task.runner import load_task

COMMITTED = sorted((ROOT / "replays").glob("*/*/*.jsonl"))


def _report(path: Path):
    stream = open_replay(path)
    task = load_task(TASK_CONF / f"{path.parts[-3]}.yaml")
    arms = [parse_arm(k) for k in stream.header.arms] if stream.header.arms else \
        task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    scored = score_stream(task, stream, arms, None, io.StringIO())
    st = scored.states
    return build_report(st, task=task.name, label="x", mode="replay", meta={}, source="s",
                        provenance="p", seed=42, resamples=200,
                        n_task=len(st.ids) + len(st.excluded) + len(scored.missing),
                        missing=scored.missing), set(st.ids)


def _answers(rec: dict) -> list[dict]:
    return [rec["arms"], *rec.get("samples", [])]


def _value(arms: dict, arm: str, field: str) -> float | None:
    a = arms[arm]
    v = a.get(field)
    if field in ("n_tokens", "seconds") and a.get("reuses"):
        other = arms[a["reuses"]].get(field)
        v = None if v is None or other is None else v + other
    return v


def _mean_ci(values: list[float]):
    if not values:
        return None
    mean = statistics.fmean(values)
    half = 1.959963984540054 * statistics.stdev(values) / math.sqrt(len(values)) \
        if len(values) > 1 else 0.0
    return mean, mean - half, mean + half, len(values)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: "/".join(p.parts[-3:]))
def test_cost_re_derived_from_the_replay_lines(path: Path) -> None:
    report, scored = _report(path)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[1:]]
    recs = [r for r in lines if r.get("id") in scored]
    k = max(len(_answers(r)) for r in recs)
    for arm, cost in report.cost.items():
        tokens, seconds, ttft, compiles = [], [], [], []
        pairs_t = pairs_s = 0.0
        for r in recs:
            per = _answers(r)
            t = [_value(a, arm, "n_tokens") for a in per]
            s = [_value(a, arm, "seconds") for a in per]
            f = [a[arm].get("ttft_seconds") for a in per]
            if None not in t:
                tokens.append(sum(t) / k)
            if None not in s:
                seconds.append(sum(s))
            if None not in t and None not in s and sum(t) > 0:
                pairs_t, pairs_s = pairs_t + sum(t), pairs_s + sum(s)
            if None not in f:
                ttft.append(statistics.fmean(f))
            compiles += [a[arm]["compile_seconds"] for a in per if "compile_seconds" in a[arm]]
        for got, want in ((cost.output_tokens, _mean_ci(tokens)),
                          (cost.seconds_per_item, _mean_ci(seconds))):
            if want is None:
                assert got is None
            else:
                assert got.items == want[3]
                assert got.mean == pytest.approx(want[0], abs=1e-6)
                assert got.ci95 == pytest.approx(want[1:3], abs=1e-6)
        assert cost.ms_per_token == (pytest.approx(1000 * pairs_s / pairs_t, abs=1e-5)
                                     if pairs_t else None)
        assert cost.ttft_median == (pytest.approx(statistics.median(ttft), abs=1e-6)
                                    if ttft else None)
        firsts = [c for c in compiles if c > 0]
        if cost.compile is None:
            assert not cost.enforced or not compiles or not any(
                c.compile is not None and c.compile.first for c in report.cost.values())
        else:
            assert cost.compile.first == len(firsts)
            assert cost.compile.cached == sum(c == 0 for c in compiles)
            assert cost.compile.first_total == pytest.approx(sum(firsts), abs=1e-5)


def test_a_replay_without_timings_says_not_recorded(tmp_path: Path) -> None:
    src = ROOT / "replays/ticket/smollm2_135m/outlines.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for line in lines[1:11]:
        rec = json.loads(line)
        for a in rec["arms"].values():
            for field in ("seconds", "n_tokens", "ttft_seconds", "compile_seconds"):
                a.pop(field, None)
        out.append(json.dumps(rec))
    bare = tmp_path / "ticket" / "m" / "bare.jsonl"
    bare.parent.mkdir(parents=True)
    bare.write_text("\n".join(out) + "\n", encoding="utf-8")
    report, _ = _report(bare)
    for cost in report.cost.values():
        assert cost.output_tokens is None and cost.seconds_per_item is None
        assert cost.ms_per_token is None and cost.ttft_median is None and cost.compile is None
        assert cost.recorded == {"tokens": 0, "seconds": 0, "ttft": 0, "compile": 0}
    from vbw.report.cost import markdown_lines
    md = "\n".join(markdown_lines(report))
    assert "not recorded" in md and "| 0.0" not in md


def test_no_rows_no_figures_and_zero_tokens_give_no_rate() -> None:
    import numpy as np

    from vbw.task.arms import parse_arm
    arms = [parse_arm("unconstrained")]
    assert summarise_cost(None, arms)["unconstrained"].output_tokens is None
    rows = np.array([[[0.0, 2.0, 0.1, 0.0, 0.0, 1.0]], [[0.0, 4.0, 0.3, 0.0, 0.0, 1.0]]])
    c = summarise_cost(rows, arms)["unconstrained"]
    assert c.ms_per_token is None and c.seconds_per_item.mean == 3.0  # no token: no rate
    assert c.compile is None and not c.enforced
