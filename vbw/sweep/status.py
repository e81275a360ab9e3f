"""Each sweep job's outcome, written to its own folder as `status.json`.

The file is the only channel from a job to the end of the sweep, so the sweep's exit code
is right whatever runs the jobs (in this process, joblib's worker processes, submitit on a
SLURM cluster, Ray). It also keeps what the job was run with (`inputs`: the composed
config and how its tasks were selected, vbw.cli.job.JobInputs' fields), so the end of a
sharded sweep can merge and score the shards with exactly the job's configuration.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vbw.redact import redact_obj
from vbw.report.files import write_atomic

STATUS = "status.json"
LAUNCH = "vbw_launch.json"  # in the sweep folder: the run id of the launch that owns it
NOT_FINISHED = 3  # a job folder without a status: killed, or its launcher failed
STARTED = "started, did not finish (killed, or its process died)"  # until the job ends


class JobStatus(BaseModel):
    """One job: its label and overrides, what it ran, how it ended."""

    # built on first use: a plain run (no sweep) never uses it, and start-up counts
    model_config = ConfigDict(extra="forbid", defer_build=True)
    job: str                         # "job 2" or "merged"
    num: int | None = None           # Hydra's job number
    overrides: list[str] = []
    model: str | None = None
    engine: str | None = None
    shard: dict[str, int] | None = None  # {index, count} of a shard job
    exit_code: int = Field(ge=0, le=3)   # vbw's codes only: a 256 would wrap to exit 0
    reason: str                      # "ok", "gate tripped ...", or the error line
    reports: list[str] = []          # report.json paths, relative to the job folder
    # what the job ran (vbw.cli.job.JobInputs' fields, validated where they are resolved)
    inputs: dict[str, Any] | None = None
    run_id: str | None = None        # the launch that ran the job (see `Launch`)
    # what the job printed on stdout when it ran outside the launching process (joblib,
    # submitit, Ray): printed under the job's header when the sweep ends, so no launcher
    # interleaves one job's report with another's. None: printed as the job ran.
    output: str | None = None
    host: str = Field(default_factory=socket.gethostname)  # where the job ran
    pid: int = Field(default_factory=os.getpid)

    @field_validator("reports")
    @classmethod
    def _inside(cls, v: list[str]) -> list[str]:
        """A report path stays inside the job's folder (relative, no `..`)."""
        for p in v:
            parts = PurePosixPath(p.replace("\\", "/")).parts
            if not p or p.startswith(("/", "\\")) or ".." in parts or ":" in p:
                raise ValueError(f"report path {p!r} is not inside the job's folder")
        return v


class Launch(BaseModel):
    """Written in the sweep folder when a multirun starts, read by every job (whatever
    process or machine runs it) into its status, and at the end to keep only this launch's
    jobs: a reused `hydra.sweep.dir` holds an earlier sweep's folders, which must not count."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # as JobStatus
    run_id: str
    started: float  # time.time() at launch


def write_launch(sweep_dir: Path) -> Launch:
    launch = Launch(run_id=uuid.uuid4().hex, started=time.time())
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(sweep_dir / LAUNCH, launch.model_dump_json() + "\n")
    return launch


def read_launch(sweep_dir: Path) -> Launch | None:
    """The sweep folder's launch record, or None (none written, or unreadable)."""
    try:
        return Launch.model_validate_json((sweep_dir / LAUNCH).read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def reports_in(job_dir: Path) -> list[str]:
    """The report.json files a run wrote: in its folder, or one sub-folder per task."""
    found = [job_dir / "report.json"] if (job_dir / "report.json").is_file() else \
        sorted(job_dir.glob("*/report.json"))
    return [str(p.relative_to(job_dir)) for p in found]


def write_status(job_dir: Path, status: JobStatus) -> Path:
    job_dir.mkdir(parents=True, exist_ok=True)
    path = job_dir / STATUS
    # overrides, reasons and the composed config, without URL credentials (vbw.redact)
    write_atomic(path, json.dumps(redact_obj(status.model_dump(mode="json")), indent=1) + "\n")
    return path


def read_status(job_dir: Path) -> JobStatus:
    """The job's status; a folder without a readable one is a job that did not finish."""
    path = job_dir / STATUS
    try:
        return JobStatus.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        reason = "no status.json: the job did not finish (killed, or its launcher failed)"
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        reason = f"unreadable status.json ({where}: {first['msg']})"
    except (OSError, ValueError) as e:
        reason = f"unreadable status.json ({type(e).__name__})"
    return JobStatus(job=f"job {job_dir.name}", exit_code=NOT_FINISHED, reason=reason,
                     run_id=_claimed_run_id(path))


def _claimed_run_id(path: Path) -> str | None:
    """The run id an invalid status.json claims (so a job of this launch that wrote a
    broken status still counts, as not finished); None if it names none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    run_id = data.get("run_id") if isinstance(data, dict) else None
    return run_id if isinstance(run_id, str) else None


def belongs(job_dir: Path, status: JobStatus, launch: Launch | None) -> bool:
    """Whether a job folder is the launch's: its status carries the launch's run id, or
    (no status at all: a launcher that failed before vbw ran) Hydra set it up after the
    launch began. Without a launch record (finish_sweep called by hand) every job counts."""
    if launch is None:
        return True
    if (job_dir / STATUS).exists():
        return status.run_id == launch.run_id
    try:
        return (job_dir / ".hydra").stat().st_mtime >= launch.started - 1
    except OSError:
        return False


def job_dirs(sweep_dir: Path, skip_prefix: str) -> list[Path]:
    """Folders of the sweep's jobs: those Hydra set up (`.hydra/`) or that hold a status,
    in job-number order; folders starting with `skip_prefix` (merges) are not jobs."""
    marks = list(sweep_dir.rglob(STATUS)) + list(sweep_dir.rglob(".hydra"))
    dirs = {m.parent for m in marks if m.parent != sweep_dir}
    dirs = {d for d in dirs
            if not d.relative_to(sweep_dir).parts[0].startswith(skip_prefix)}
    return sorted(dirs, key=lambda d: (len(d.name), d.name) if d.name.isdigit() else (1 << 30, str(d)))


def sweep_exit(codes: list[int]) -> int:
    """The sweep's exit code: the worst job's (3 internal > 2 usage > 1 gate > 0)."""
    return max(codes, default=0)
