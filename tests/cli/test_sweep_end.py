"""The end of a sweep (vbw.cli.sweep_end) under real Hydra launchers: jobs in this
process, in joblib's worker processes and in submitit's local executor each leave a
status.json; the launching process merges shards, writes the summary and exits with the
worst job's code, computed from those files."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

from tests.conftest import CONF_ROOT, TASK_CONF, load_json, one_line_error, run_vbw
from tests.modes.test_merge import cfg, live, report, shards
from vbw.cli.sweep_end import finish_sweep
from vbw.cli.job import JobInputs
from vbw.sweep.status import JobStatus, write_status


def _tripped(report_json: Path, threshold: float) -> bool:
    arms = load_json(report_json)["arms"]
    return any(k.startswith("constrained[") and a["wrong_but_valid"]["rate"] > threshold
               for k, a in arms.items())


def test_2x2_sweep_under_joblib_exits_1_when_one_task_trips(tmp_path: Path) -> None:
    proc = run_vbw("-m", "hydra/launcher=joblib", "task=gsm8k,bfcl_simple",
                   "model=smollm2_135m", "engine=outlines,llamacpp", "n=40",
                   "gate.wrong_valid_above=0.8", cwd=tmp_path, timeout=300)
    [sweep] = (tmp_path / "vbw-runs/multirun").glob("*/*")   # one folder for every job
    summary = load_json(sweep / "summary.json")
    rows = summary["rows"]
    assert len(rows) == 4 and {r["task"] for r in rows} == {"gsm8k", "bfcl_simple"}
    tripped = {r["job"] for r in rows if _tripped(sweep / r["report_json"], 0.8)}
    assert tripped and {r["task"] for r in rows if r["job"] in tripped} == {"gsm8k"}
    assert {r["job"] for r in rows if r["exit_code"] == 1} == tripped
    assert proc.returncode == summary["exit_code"] == 1, proc.stderr
    # the jobs ran in joblib's worker processes, not in the launching one (its pid
    # names the sweep folder)
    parent = int(sweep.name.rsplit("_", 1)[1])
    pids = {load_json(sweep / str(i) / "status.json")["pid"] for i in range(4)}
    assert parent not in pids
    # the workers' output does not interleave: each job's report is printed by the
    # launching process under that job's header, in job order, then the summary
    headers = [f"== job {i}: {' '.join(r['overrides'])} ==" for i, r in enumerate(rows)]
    starts = [proc.stdout.index(h) for h in headers]
    assert starts == sorted(starts)
    assert not proc.stdout[:starts[0]]  # nothing but reports on stdout
    notes = [x for x in proc.stderr.splitlines() if "its report is printed under its header" in x]
    assert len(notes) == 4, proc.stderr  # one note per job, on stderr
    ends = starts[1:] + [proc.stdout.index("# vbw sweep: 4 row(s), exit 1")]
    for i, (r, a, b) in enumerate(zip(rows, starts, ends)):
        block = proc.stdout[a:b]
        assert block.count("# vbw report: ") == 1 and f"# vbw report: {r['task']} " in block
        assert block.rstrip().endswith(f"Reports written to {sweep / str(i)}: report.json, "
                                       "report.md, report.html, quadrants.svg, ledger.csv, "
                                       "answers.csv")
        assert (sweep / str(i) / "report.md").read_text() in block  # the whole report
    for job in tripped:
        assert re.search(rf"gate tripped in {job} \(task=gsm8k ", proc.stderr)
    html = (sweep / "summary.html").read_text()
    assert all(f'href="{i}/report.html"' in html for i in range(4))


def test_submitit_local_sweep_keeps_going_after_a_failed_job(tmp_path: Path) -> None:
    # qwen has no llamacpp replay: job 1 is a usage error (2), job 0 still runs
    proc = run_vbw("-m", "hydra/launcher=submitit_local", "task=gsm8k",
                   "engine=outlines,llamacpp", "mode=replay", "n=10",
                   f"hydra.sweep.dir={tmp_path}/s", cwd=tmp_path, timeout=300)
    summary = load_json(tmp_path / "s/summary.json")
    codes = [(r["engine"], r["exit_code"]) for r in summary["rows"]]
    assert codes == [("outlines", 0), ("llamacpp", 2)]
    assert "no replay for task=gsm8k" in summary["rows"][1]["reason"]
    assert proc.returncode == 2, proc.stderr
    assert list((tmp_path / "s").glob(".submitit/*"))      # submitit ran them
    assert (tmp_path / "s/0/report.json").is_file()


def _shard_job(sweep: Path, i: int, count: int) -> None:
    """A finished shard job as a launcher leaves it: its replay, report and status."""
    live(sweep / str(i), shard={"index": i, "count": count})
    inputs = JobInputs(config=cfg(shard={"index": i, "count": count}).model_dump(by_alias=True),
                       task_node={"files": [str(TASK_CONF / "gsm8k.yaml")]},
                       roots=[str(CONF_ROOT)], cwd=str(sweep))
    write_status(sweep / str(i), JobStatus(
        job=f"job {i}", num=i, overrides=["mode=live", f"shard.index={i}", "shard.count=3"],
        shard={"index": i, "count": count}, exit_code=0, reason="ok", inputs=inputs.model_dump()))


def test_end_of_a_sharded_sweep_merges_and_scores(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    for i in range(3):
        _shard_job(sweep, i, 3)
    live(tmp_path / "whole")
    out = io.StringIO()
    assert finish_sweep(sweep, out, io.StringIO()) == 0
    assert report(sweep / "merged") == report(tmp_path / "whole")
    rows = load_json(sweep / "summary.json")["rows"]
    assert [r["job"] for r in rows] == ["job 0", "job 1", "job 2", "merged"]
    assert rows[-1]["other_overrides"] == ["mode=live", "shard.count=3"]
    assert "== merged: 3 shard(s) of mode=live shard.count=3 ==" in out.getvalue()


def test_a_failed_shard_is_not_merged(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    for i in range(2):
        _shard_job(sweep, i, 2)
    status = json.loads((sweep / "1/status.json").read_text())
    status.update(exit_code=3, reason="internal error: boom")
    (sweep / "1/status.json").write_text(json.dumps(status))
    err = io.StringIO()
    assert finish_sweep(sweep, io.StringIO(), err) == 3
    assert "not merged: job 1 (shard 1) failed: internal error: boom" in err.getvalue()
    assert not (sweep / "merged/report.json").exists()


def test_merge_by_hand_from_the_command_line(tmp_path: Path) -> None:
    shards(tmp_path / "sweep", 2)
    args = ["mode=merge", "task=gsm8k", "model=smollm2_135m"]
    proc = run_vbw(*args, f"replays=[{tmp_path}/sweep]", f"hydra.run.dir={tmp_path}/m",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert load_json(tmp_path / "m/report.json")["n"] == 7
    line = one_line_error(run_vbw(*args, f"replays=[{tmp_path}/sweep/s0]",
                                  f"hydra.run.dir={tmp_path}/m2", cwd=tmp_path))
    assert "missing shard(s) 1 of 2" in line
    line = one_line_error(run_vbw("shard.index=2", "shard.count=2", cwd=tmp_path))
    assert "shard.index 2 must be below shard.count 2" in line



def test_a_reused_sweep_folder_counts_only_this_launchs_jobs(tmp_path: Path) -> None:
    """Issue 17 item 5: an earlier sweep's job folders, a forged exit code 256 and a report
    path out of the sweep folder neither count nor change the exit code."""
    sweep = tmp_path / "s"
    outside = tmp_path / "elsewhere"
    live(outside)                                        # a real report outside the sweep
    stale = {"job": "job 7", "num": 7, "exit_code": 0, "reason": "ok",
             "reports": ["report.json"]}
    for name, status in [("7", stale), ("0", {**stale, "job": "job 0", "num": 0}),
                         ("fake", {**stale, "exit_code": 256}),
                         ("out", {**stale, "reports": ["../../elsewhere/report.json"]})]:
        (sweep / name).mkdir(parents=True)
        (sweep / name / "status.json").write_text(json.dumps(status))
    (sweep / "link").mkdir()
    (sweep / "link" / "report.json").symlink_to(outside / "report.json")
    (sweep / "link" / "status.json").write_text(json.dumps(stale))
    start = time.perf_counter()
    proc = run_vbw("-m", "task=gsm8k", "model=smollm2_135m", "engine=outlines,llamacpp",
                   "mode=replay", "n=5",
                   f"hydra.sweep.dir={sweep}", cwd=tmp_path, timeout=300)
    assert time.perf_counter() - start < 120
    assert proc.returncode == 0, proc.stderr[-2000:]
    [warning] = [ln for ln in proc.stderr.splitlines() if "warning" in ln]
    assert "ignored 4 job folder(s) not from this launch" in warning, warning
    assert all(name in warning for name in ("7", "fake", "link", "out"))
    summary = load_json(sweep / "summary.json")
    assert [r["job"] for r in summary["rows"]] == ["job 0", "job 1"]
    assert summary["exit_code"] == 0 and "exit 256" not in proc.stdout
    assert all(r["n"] == 5 for r in summary["rows"])


def test_a_forged_status_of_this_launch_cannot_fake_success(tmp_path: Path) -> None:
    """Even with the launch's run id, exit 256 (which would wrap to 0) is an unreadable
    status, so the job did not finish: the sweep exits 3; a report linked from outside
    the job's folder is never read."""
    from vbw.sweep.status import write_launch

    sweep = tmp_path / "s"
    launch = write_launch(sweep)
    live(tmp_path / "elsewhere")
    (sweep / "0").mkdir()
    (sweep / "0" / "status.json").write_text(json.dumps(
        {"job": "job 0", "exit_code": 256, "reason": "ok", "run_id": launch.run_id}))
    (sweep / "1").mkdir()
    (sweep / "1" / "report.json").symlink_to(tmp_path / "elsewhere" / "report.json")
    (sweep / "1" / "status.json").write_text(json.dumps(
        {"job": "job 1", "exit_code": 0, "reason": "ok", "reports": ["report.json"],
         "run_id": launch.run_id}))
    out, err = io.StringIO(), io.StringIO()
    assert finish_sweep(sweep, out, err) == 3
    rows = load_json(sweep / "summary.json")["rows"]
    assert rows[0]["exit_code"] == 3 and "exit_code" in rows[0]["reason"]
    assert rows[1]["report_json"] is None and rows[1]["n"] is None


def test_basic_launcher_jobs_print_as_they_run(tmp_path: Path) -> None:
    """In the launching process (Hydra's basic launcher) a job prints under its header as
    it runs and keeps nothing for the end: its status holds no output."""
    proc = run_vbw("-m", "task=gsm8k,bfcl_simple", "n=5", f"hydra.sweep.dir={tmp_path}/s",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "its report is printed under its header" not in out
    first, second = out.index("== job 0: task=gsm8k n=5 =="), out.index("== job 1: task=bfcl_simple n=5 ==")
    assert first < out.index("# vbw report: gsm8k") < second < out.index("# vbw report: bfcl_simple")
    assert out.count("# vbw report: ") == 2  # printed once, not again at the end
    assert load_json(tmp_path / "s/0/status.json")["output"] is None


def test_outputs_of_jobs_run_elsewhere_are_printed_under_their_headers(tmp_path: Path) -> None:
    from vbw.cli.sweep_end import print_outputs

    jobs = [(tmp_path / "0", JobStatus(job="job 0", num=0, overrides=["task=a"], exit_code=0,
                                       reason="ok", output="# vbw report: a\nline\n")),
            (tmp_path / "1", JobStatus(job="job 1", num=1, overrides=["task=b\n# x"],
                                       exit_code=2, reason="no replay for b", output="")),
            (tmp_path / "2", JobStatus(job="job 2", num=2, exit_code=0, reason="ok"))]
    out = io.StringIO()
    print_outputs(jobs, out)
    assert out.getvalue() == ("== job 0: task=a ==\n# vbw report: a\nline\n\n"
                              "== job 1: task=b # x ==\n(no output: no replay for b)\n\n")


def test_a_sweep_s_closing_lines_list_only_the_files_written(tmp_path: Path) -> None:
    """outputs=[json,md]: no summary.html nor report.html is written, and no line says so."""
    proc = run_vbw("-m", "task=gsm8k,bfcl_simple", "n=5", "outputs=[json,md]",
                   f"hydra.sweep.dir={tmp_path}/s", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sweep = tmp_path / "s"
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == f"Sweep summary written to {sweep}: summary.json, summary.md"
    for i in range(2):
        assert f"Reports written to {sweep / str(i)}: report.json, report.md, answers.csv" \
            in lines
    assert not list(sweep.rglob("*.html")) and ".html" not in proc.stdout
