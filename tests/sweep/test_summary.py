"""The sweep summary (vbw.sweep.summary, vbw.sweep.html): rows from the files jobs leave,
markdown, JSON and a self-contained HTML page whose every string is escaped."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.conftest import ROOT, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.sweep.status import JobStatus, reports_in, write_status
from vbw.sweep.summary import job_rows, write_summary
from vbw.task.runner import load_task

HOSTILE = '<script>alert("x")</script></td>|`'


QWEN_GSM8K = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"


def _job(sweep: Path, name: str, overrides: list[str], code: int, reason: str,
         replay: Path = QWEN_GSM8K, outputs: list[str] | None = None) -> Path:
    d = sweep / name
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "n": 10, "replay": str(replay), "outputs": outputs})
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
    heads = [c for c in report["comparisons"] if c["kind"] == "headline"]
    assert [(h["from"], h["to"]) for h in row["headlines"]] == \
        [(c["from"], c["to"]) for c in heads] == \
        [("prompt_json[answer]", "constrained[answer]"),
         ("prompt_json[reasoning]", "constrained[reasoning]")]
    for h, c in zip(row["headlines"], heads):
        d = c["deltas"]["answer_accuracy"]
        assert {k: h[k] for k in d} == d  # the report's delta, verdict and all
    assert row["report_html"] == "0/report.html" and row["report"] == "0/report.md"


def test_a_row_links_only_the_reports_written(tmp_path: Path) -> None:
    """outputs=[json]: the row names no report.md nor report.html (None, shown as -)."""
    d = _job(tmp_path, "0", ["task=gsm8k", "outputs=[json]"], 0, "ok", outputs=["json"])
    from vbw.sweep.status import read_status
    [row] = job_rows(d, tmp_path, read_status(d))
    assert row["report"] is None and row["report_html"] is None
    assert row["report_json"] == "0/report.json"


def test_one_named_column_per_headline_comparison(tmp_path: Path) -> None:
    """GSM8K has two headline comparisons: two columns, each named, each cell worded as
    the job's report.md words that comparison's accuracy delta, the CI right after the
    observed change."""
    d = _job(tmp_path, "0", ["task=gsm8k", "n=10"], 0, "ok")
    from vbw.sweep.status import read_status
    rows = job_rows(d, tmp_path, read_status(d))
    md = write_summary(tmp_path, rows, 0)
    head = next(x for x in md.splitlines() if x.startswith("| job |"))
    assert "Δ accuracy `prompt_json[answer] → constrained[answer]` | Δ accuracy " \
           "`prompt_json[reasoning] → constrained[reasoning]` | status" in head
    cells = next(x for x in md.splitlines() if x.startswith("| job 0 |")).split(" | ")
    report_md = (d / "report.md").read_text()
    for cell, pair in zip(cells[6:8], ("answer", "reasoning")):
        ci = "[" + cell.split(" [")[1].split("]")[0] + "]"
        assert cell.startswith(f"{cell.split(' pts ')[0]} pts {ci}"), cell
        said = cell.replace(f" {ci}", "", 1)
        block = report_md.split(f"`prompt_json[{pair}]` → `constrained[{pair}]`")[1]
        accuracy = next(x for x in block.splitlines() if x.startswith("- answer accuracy:"))
        assert accuracy == f"- answer accuracy: {said}; 95% CI {ci} pts", (cell, accuracy)
    html = (tmp_path / "summary.html").read_text()
    assert html.count("<th>Δ accuracy <code>") == 2


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


def test_interventions_side_by_side(tmp_path: Path) -> None:
    from tests.interventions_data import with_interventions
    from vbw.sweep.status import read_status

    replay = with_interventions(QWEN_GSM8K, tmp_path / "iv.jsonl", 10)
    jobs = [_job(tmp_path / "s", "0", ["task=gsm8k"], 0, "ok", replay),
            _job(tmp_path / "s", "1", ["task=gsm8k"], 0, "ok")]
    rows = [r for d in jobs for r in job_rows(d, tmp_path / "s", read_status(d))]
    report = json.loads((jobs[0] / "report.json").read_text())
    assert rows[0]["interventions"] == report["interventions"]
    assert rows[0]["interventions"]["constrained[answer]"]["recorded"] is True
    assert rows[1]["interventions"]["constrained[answer]"]["recorded"] is False
    md = write_summary(tmp_path / "s", rows, 0)
    hit = report["interventions"]["constrained[answer]"]["all"]["with_interventions"]
    assert f"| `constrained[answer]` | `job 0 gsm8k` | {hit} of 10 (" in md
    assert "| `constrained[answer]` | `job 1 gsm8k` | not recorded |" in md
    page = (tmp_path / "s" / "summary.html").read_text()
    assert f"interventions: {hit} of 10 (" in page and "interventions not recorded" in page
    changed = report["interventions"]["constrained[answer]"]["all"]["answer_items"]
    assert f"the grammar changed the extracted answer on {changed} of 10 items (" in page


def test_a_k_sample_row_reads_the_samples_section(tmp_path: Path) -> None:
    from tests.score.test_samples import _sampled_replay
    from vbw.sweep.status import read_status
    replay = _sampled_replay(tmp_path / "r", k=3, n=10)
    d = _job(tmp_path / "s", "0", ["task=gsm8k"], 0, "ok", replay=replay)
    [row] = job_rows(d, tmp_path / "s", read_status(d))
    report = json.loads((d / "report.json").read_text())
    sampled = report["samples"]
    assert row["samples"] == 3
    for key, arm in sampled["arms"].items():
        assert row["arms"][key]["answer_accuracy"]["rate"] == arm["accuracy"]["rate"]
        assert row["arms"][key]["pass_at_3"]["rate"] == arm["pass_at"]["3"]["rate"]
    heads = [c for c in sampled["comparisons"] if c["kind"] == "headline"]
    assert [h["p"] for h in row["headlines"]] == \
        [c["deltas"]["answer_accuracy"]["p"] for c in heads]
    write_summary(tmp_path / "s", [row], 0)
    md = (tmp_path / "s/summary.md").read_text()
    assert "| 10 × 3 |" in md and "(mean over 3 samples per item)" in md
    assert "10 × 3" in (tmp_path / "s/summary.html").read_text()
