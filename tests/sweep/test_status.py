"""Job status files (vbw.sweep.status): what a job leaves, how the sweep reads it back."""

from __future__ import annotations

from pathlib import Path

from vbw.sweep.status import (NOT_FINISHED, JobStatus, job_dirs, read_status, sweep_exit,
                              write_status)


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
