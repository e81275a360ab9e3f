"""Job status files (vbw.sweep.status): what a job leaves, how the sweep reads it back."""

from __future__ import annotations

import json
from pathlib import Path

from vbw.sweep.status import (NOT_FINISHED, JobStatus, belongs, job_dirs, read_launch,
                              read_status, sweep_exit, write_launch, write_status)


def test_status_round_trips_and_records_where_it_ran(tmp_path: Path) -> None:
    s = JobStatus(job="job 3", num=3, overrides=["task=gsm8k"], exit_code=1,
                  reason="gate tripped", reports=["report.json"])
    write_status(tmp_path / "3", s)
    back = read_status(tmp_path / "3")
    assert back == s and back.pid > 0 and back.host


def test_a_job_without_status_did_not_finish(tmp_path: Path) -> None:
    (tmp_path / "0" / ".hydra").mkdir(parents=True)          # Hydra set it up, no status
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "status.json").write_text("{not json")
    assert read_status(tmp_path / "0").exit_code == NOT_FINISHED
    assert "did not finish" in read_status(tmp_path / "0").reason
    assert "unreadable status.json" in read_status(tmp_path / "1").reason


def test_job_dirs_in_job_order_without_merges(tmp_path: Path) -> None:
    for name in ("10", "2", "merged", "merged_1"):
        write_status(tmp_path / name, JobStatus(job=name, exit_code=0, reason="ok"))
    (tmp_path / "9" / ".hydra").mkdir(parents=True)
    assert [d.name for d in job_dirs(tmp_path, "merged")] == ["2", "9", "10"]


def test_sweep_exit_is_the_worst_jobs() -> None:
    assert sweep_exit([]) == 0
    assert sweep_exit([0, 1, 0]) == 1
    assert sweep_exit([1, 2, 0]) == 2
    assert sweep_exit([3, 1, 2]) == 3


def test_a_forged_exit_code_or_report_path_is_refused(tmp_path: Path) -> None:
    """Exit codes are vbw's 0-3 (256 would wrap to exit 0); report paths stay inside the
    job's folder. A status breaking either is unreadable: the job did not finish (3)."""
    good = JobStatus(job="job 0", exit_code=0, reason="ok").model_dump()
    for k, (field, value, words) in enumerate([("exit_code", 256, "exit_code"),
                                ("exit_code", -1, "exit_code"),
                                ("reports", ["../../elsewhere/report.json"], "not inside"),
                                ("reports", ["/etc/report.json"], "not inside")]):
        d = tmp_path / str(k)
        d.mkdir()
        (d / "status.json").write_text(json.dumps({**good, field: value}))
        back = read_status(d)
        assert back.exit_code == NOT_FINISHED and words in back.reason, back.reason


def test_only_the_launchs_jobs_belong(tmp_path: Path) -> None:
    launch = write_launch(tmp_path)
    assert read_launch(tmp_path) == launch
    write_status(tmp_path / "0", JobStatus(job="job 0", exit_code=0, reason="ok",
                                           run_id=launch.run_id))
    write_status(tmp_path / "1", JobStatus(job="job 1", exit_code=0, reason="ok",
                                           run_id="earlier"))
    write_status(tmp_path / "2", JobStatus(job="job 2", exit_code=0, reason="ok"))
    (tmp_path / "3" / ".hydra").mkdir(parents=True)   # set up now, never finished: ours
    ours = [d.name for d in job_dirs(tmp_path, "merged")
            if belongs(d, read_status(d), launch)]
    assert ours == ["0", "3"]
    assert all(belongs(d, read_status(d), None) for d in job_dirs(tmp_path, "merged"))
