"""The sweep summary (vbw.sweep.summary, vbw.sweep.html): rows from the files jobs leave,
markdown, JSON and a self-contained HTML page whose every string is escaped."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.conftest import ROOT, TASK_CONF
from vbw.app import run
from vbw.config import RunConfig
from vbw.sweep.status import JobStatus, reports_in, write_status
from vbw.sweep.summary import job_rows, write_summary
from vbw.task.runner import load_task

HOSTILE = '<script>alert("x")</script></td>|`'


def _job(sweep: Path, name: str, overrides: list[str], code: int, reason: str) -> Path:
    d = sweep / name
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "n": 10, "replay": str(ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl")})
    run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], d, sweep, io.StringIO(), io.StringIO())
    write_status(d, JobStatus(job=f"job {name}", num=int(name), overrides=overrides,
                              model="qwen2_5_0_5b", engine="outlines", exit_code=code,
                              reason=reason, reports=reports_in(d)))
    return d


def test_rows_hold_every_arm_the_headline_and_the_status(tmp_path: Path) -> None:
    d = _job(tmp_path, "0", ["task=gsm8k", "n=10"], 0, "ok")
    from vbw.sweep.status import read_status
    [row] = job_rows(d, tmp_path, read_status(d))
    report = json.loads((d / "report.json").read_text())
    assert row["task"] == "gsm8k" and row["n"] == report["n"] == 10
    assert row["other_overrides"] == ["n=10"]
    assert set(row["arms"]) == set(report["arms"])
    for key, arm in report["arms"].items():
        assert row["arms"][key]["wrong_but_valid"]["rate"] == arm["wrong_but_valid"]["rate"]
    headline = next(c for c in report["comparisons"] if c["kind"] == "headline")
    assert row["headline"]["delta"] == headline["deltas"]["answer_accuracy"]["delta"]
    assert row["report_html"] == "0/report.html" and row["report"] == "0/report.md"


def test_a_failed_job_is_a_row_with_its_reason(tmp_path: Path) -> None:
    write_status(tmp_path / "1", JobStatus(job="job 1", num=1, overrides=["engine=llamacpp"],
                                           exit_code=2, reason="no replay for ..."))
    from vbw.sweep.status import read_status
    [row] = job_rows(tmp_path / "1", tmp_path, read_status(tmp_path / "1"))
    assert row["exit_code"] == 2 and row["arms"] == {} and row["report"] is None
    md = write_summary(tmp_path, [row], 2)
    assert "exit 2: no replay for ..." in md


def test_summary_files_escape_hostile_text(tmp_path: Path) -> None:
    d = _job(tmp_path, "0", ["task=gsm8k", f"+notes={HOSTILE}"], 1, f"gate {HOSTILE}")
    from vbw.sweep.status import read_status
    rows = job_rows(d, tmp_path, read_status(d))
    md = write_summary(tmp_path, rows, 1)
    html = (tmp_path / "summary.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "</td>|`" not in html
    assert '<a href="0/report.html">report.html</a>' in html
    assert "http" not in html.replace('lang="en"', "")    # nothing fetched from anywhere
    # markdown: prose escaped; inside a code span markup is inert text
    assert md.count("<script>") == md.count("`` +notes=<script>") == 1
    assert "gate &lt;script&gt;" in md
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["exit_code"] == 1 and data["rows"][0]["overrides"][1].endswith(HOSTILE)
    assert (tmp_path / "summary.md").read_text() == md
