"""The two jobs Hydra's task function runs: a plain run (handed to the warm worker when
one waits) and one job of a multirun (its outcome in its own status.json, never this
process's exit: vbw.sweep.status). Both turn the composed config into `JobInputs` as plain
data, resolve it once (or take what the warm worker resolved) and run it in the run's
claimed folder (vbw.cli.job.run). The scoring stack is imported only where a job runs.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from omegaconf import DictConfig, OmegaConf

from vbw.cli import warm_worker
from vbw.cli.compose import config_roots
from vbw.cli.run_folder import claimed
from vbw.errors import VbwError
from vbw.redact import redact_text
from vbw.report.escape import one_line as escape_line

if TYPE_CHECKING:  # the scoring stack is imported where a job runs (see vbw.cli.warm_worker)
    from vbw.cli.job import JobInputs
    from vbw.config import RunConfig
    from vbw.sweep.status import JobStatus
    from vbw.task.runner import Task

INTERNAL_ERROR = 3


def _task_overrides(overrides: Any) -> list[str]:
    return [o for o in overrides if o.lstrip("+~").startswith("task.")]


_SELECTING_ARMS = ("arms", "arms.kinds", "arms.schemas")
_SELECTING_ITEMS = ("task.dataset.first",)


def arms_given(overrides: Any) -> bool:
    """Whether the command line's overrides select arms (the `arms` group, or its kinds
    or schemas); its token caps select none."""
    return any(o.lstrip("+~").split("=", 1)[0] in _SELECTING_ARMS for o in overrides)


def first_given(overrides: Any) -> bool:
    """Whether the command line's overrides set the task's `first` (its item selection)."""
    return any(o.lstrip("+~").split("=", 1)[0] in _SELECTING_ITEMS for o in overrides)


def job_fields(cfg: DictConfig, hc: Any) -> dict[str, Any]:
    """What the job runs, as plain data (vbw.cli.job.JobInputs' fields): the composed
    config (the task apart: a task is pure YAML, read as written, never interpolated) and
    how its tasks are selected."""
    rest = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "task"])
    data: Any = OmegaConf.to_container(rest, resolve=True)
    node = OmegaConf.to_container(cfg.task, resolve=False) if "task" in cfg else None
    return {"config": data, "task_node": node, "task_choice": hc.runtime.choices.get("task"),
            "roots": [str(r) for r in config_roots(hc.runtime.config_sources)],
            "cwd": os.getcwd(), "task_overrides": _task_overrides(hc.overrides.task),
            "arms_given": arms_given(hc.overrides.task),
            "first_given": first_given(hc.overrides.task)}


def run_job(inputs: JobInputs, out_dir: Path, status: JobStatus | None = None,
            out: TextIO | None = None,
            resolved: tuple[RunConfig, list[Task]] | None = None) -> int:
    """Validate, select the tasks and run in a claimed folder (`resolved`: the config and
    tasks already validated and loaded, by the warm worker); `status`, in a sweep, is
    filled in with what the run is (model, engine, shard) as soon as that is known."""
    from vbw.cli.job import run
    from vbw.modes.replay import model_and_engine

    run_cfg, tasks = resolved if resolved is not None else inputs.resolve()
    if status is not None:
        status.model, status.engine = model_and_engine(run_cfg)
        if run_cfg.shard.count > 1:
            status.shard = run_cfg.shard.model_dump()
    named = None
    if status is not None:  # the gate names the job: "job 2 (task=gsm8k engine=llamacpp)"
        named = f"{status.job} ({' '.join(status.overrides)})" if status.overrides \
            else status.job
    with claimed(out_dir):
        return run(run_cfg, tasks, out_dir, Path(inputs.cwd), out or sys.stdout, job=named,
                   arms_given=inputs.arms_given, first_given=inputs.first_given)


def plain_job(fields: dict[str, Any], out_dir: Path) -> int:
    """A plain run: by the warm worker when one waits (vbw.cli.warm_worker; the same output
    and exit code), else here, on what the worker validated and loaded if it refused the
    job (it may generate)."""
    outcome = warm_worker.hand_over(fields, out_dir)
    if outcome is not None and outcome.resolved is None:
        return outcome.show(sys.stdout, sys.stderr)
    from vbw.cli.job import JobInputs

    resolved = outcome.show(sys.stdout, sys.stderr) if outcome is not None else None
    return run_job(JobInputs(**fields), out_dir, resolved=resolved)


def job_label(num: int, overrides: list[str]) -> str:
    return f"job {num}: {' '.join(overrides)}" if overrides else f"job {num}"


def _one_write(line: str) -> None:
    """Print the note `line` on stderr with one write(2): workers of one launcher share the
    pipe, and print's separate writes of text and newline could interleave with another
    worker's."""
    sys.stderr.flush()
    data = line.encode("utf-8", "backslashreplace")
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr replaced (a test's capture)
        sys.stderr.write(line)
        sys.stderr.flush()
        return
    while data:
        data = data[os.write(fd, data):]


def sweep_job(cfg: DictConfig, hc: Any, launcher_pid: int | None) -> None:
    """One job of a multirun: a header naming it, then the run; its outcome goes to
    status.json in its folder, never to this process (a launcher may run each job in
    another process or machine). Only an interrupt stops the sweep.

    In the launching process (`launcher_pid`, with Hydra's basic launcher) the job prints
    as it runs, under its header. Elsewhere (joblib's workers, submitit, Ray) jobs run at
    once and their output would interleave, so a job notes on stderr that it started and
    keeps the rest in status.json; the end of the sweep prints it under the job's header
    (vbw.cli.sweep_end)."""
    from vbw.cli.job import JobInputs
    from vbw.sweep.status import STARTED, JobStatus, read_launch, reports_in, write_status

    out_dir = Path(hc.runtime.output_dir)
    overrides = [redact_text(o) for o in hc.overrides.task]  # printed and recorded
    label = job_label(hc.job.num, overrides)
    here = launcher_pid == os.getpid() and threading.current_thread() is threading.main_thread()
    captured = None if here else io.StringIO()
    if here:
        print(f"== {escape_line(label)} ==", flush=True)
    else:
        _one_write(f"vbw: {escape_line(label)}: running in process {os.getpid()}; its report "
                   "is printed under its header when the sweep ends\n")
    launch = read_launch(Path(str(hc.sweep.dir)))
    status = JobStatus(job=f"job {hc.job.num}", num=hc.job.num, overrides=overrides,
                       exit_code=INTERNAL_ERROR, reason=STARTED,
                       run_id=launch.run_id if launch else None)
    try:
        write_status(out_dir, status)  # a job killed from here on is this launch's, unfinished
    except OSError:
        pass  # the run below reports an unwritable folder as a usage error
    status.reason = "internal error"
    try:
        inputs = JobInputs(**job_fields(cfg, hc))
        status.inputs = inputs.model_dump()
        status.exit_code = run_job(inputs, out_dir, status, captured)
        status.reason = "ok" if status.exit_code == 0 else "gate tripped"
    except VbwError as e:
        reason = redact_text(str(e))
        print(f"vbw: error: {escape_line(label)}: {reason}", file=sys.stderr, flush=True)
        status.exit_code, status.reason = e.exit_code, reason
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as e:  # noqa: BLE001  a bug: recorded, and the other jobs still run
        traceback.print_exc()
        print(f"vbw: internal error in {escape_line(label)} (a bug in vbw, not in your "
              "input): please report it with the command line and the traceback above",
              file=sys.stderr, flush=True)
        status.reason = f"internal error: {type(e).__name__}: {e}"
    status.reports = reports_in(out_dir)
    if captured is not None:
        status.output = captured.getvalue()
    write_status(out_dir, status)
