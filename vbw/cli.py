"""The `vbw` console script: a thin Hydra app. The command line is first composed with
Hydra's own loader (vbw.compose) so a bad override is one line, exit 2; a plain run is
then run on that composition by Hydra's job runner (vbw.launch), anything else (sweeps,
--cfg, --help) by `@hydra.main`; pydantic validates, vbw.app runs. Every VbwError
becomes one line on stderr and exit 2. In a multirun each job records its outcome in its
own status.json instead of exiting (vbw.sweep), and the sweep's exit code is read back
from the summary.json the multirun's end writes (vbw.sweep.outcome)."""

from __future__ import annotations

import contextlib
import errno
import gc
import io
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import hydra
from omegaconf import DictConfig, OmegaConf

from vbw.compose import CONF, CONFIG_NAME, check_command_line, config_roots, parse_args
from vbw.errors import VbwError
from vbw.hydrafiles import redact_job_files
from vbw.launch import job_name, run_composed
from vbw.redact import redact_text
from vbw.report.escape import one_line as escape_line
from vbw import warm
from vbw.rundir import claimed
from vbw.sweep.outcome import read_exit_code, sweep_dir_told
from vbw.task.locate import is_task_path

if TYPE_CHECKING:  # the scoring stack is imported where a job runs (see vbw.warm)
    from vbw.sweep.status import JobInputs, JobStatus

INTERNAL_ERROR = 3
_LAUNCHER_PID: int | None = None  # set by main(): the process a sweep's jobs report to


def _fail(e: VbwError) -> None:
    print(f"vbw: error: {redact_text(str(e))}", file=sys.stderr)
    sys.exit(e.exit_code)


# a device with no room for what vbw writes (`vbw > /dev/full`, a full disk or quota):
# the environment's doing, so one line and exit 2, not a bug's traceback and exit 3
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _stdout_gone() -> None:
    """Point stdout at /dev/null: nothing more can reach it (a reader that left, a device
    with no room), and the interpreter's last flush must not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _no_room(e: OSError) -> None:
    where = f" ({e.filename})" if e.filename else ""
    _stdout_gone()
    print(f"vbw: error: cannot write{where}: {e.strerror or e}", file=sys.stderr)
    sys.exit(2)


def _internal_error() -> None:
    """An exception vbw did not anticipate is a bug: keep the traceback, ask for a report,
    and exit 3, so CI never reads it as a tripped gate (1) or a usage error (2)."""
    traceback.print_exc()
    print("vbw: internal error (a bug in vbw, not in your input): please report it with the "
          "command line and the traceback above", file=sys.stderr)
    sys.exit(INTERNAL_ERROR)


def task_path_form(argv: list[str]) -> list[str]:
    """`task=./my_task.yaml` (or a comma list of paths, for -m) is shorthand for the
    canonical `task.files=[./my_task.yaml]`; a note on stdout says so (stderr is kept for
    errors, one line each)."""
    out = []
    for arg in argv:
        key, eq, value = arg.partition("=")
        parts = value.split(",")
        if eq and key == "task" and value and "(" not in value \
                and all(p and is_task_path(p) for p in parts):
            new = "task.files=" + ",".join(f"[{p}]" for p in parts)
            print(f"vbw: note: {arg} is read as {new} (task.files is the canonical form)")
            arg = new
        out.append(arg)
    return out


def _task_overrides(overrides: Any) -> list[str]:
    return [o for o in overrides if o.lstrip("+~").startswith("task.")]


def job_fields(cfg: DictConfig, hc: Any) -> dict[str, Any]:
    """What the job runs, as plain data (vbw.sweep.status.JobInputs' fields): the composed
    config (the task apart: a task is pure YAML, read as written, never interpolated) and
    how its tasks are selected."""
    rest = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "task"])
    data: Any = OmegaConf.to_container(rest, resolve=True)
    node = OmegaConf.to_container(cfg.task, resolve=False) if "task" in cfg else None
    return {"config": data, "task_node": node, "task_choice": hc.runtime.choices.get("task"),
            "roots": [str(r) for r in config_roots(hc.runtime.config_sources)],
            "cwd": os.getcwd(), "task_overrides": _task_overrides(hc.overrides.task)}


def job_inputs(cfg: DictConfig, hc: Any) -> JobInputs:
    from vbw.sweep.status import JobInputs

    return JobInputs(**job_fields(cfg, hc))


def _run_job(inputs: JobInputs, out_dir: Path, status: JobStatus | None = None,
             out: TextIO | None = None) -> int:
    """Validate, select the tasks and run in a claimed folder; `status`, in a sweep, is
    filled in with what the run is (model, engine, shard) as soon as that is known."""
    from vbw.app import run
    from vbw.modes.replay import model_and_engine

    run_cfg, tasks = inputs.resolve()
    if status is not None:
        status.model, status.engine = model_and_engine(run_cfg)
        if run_cfg.shard.count > 1:
            status.shard = run_cfg.shard.model_dump()
    named = None
    if status is not None:  # the gate names the job: "job 2 (task=gsm8k engine=llamacpp)"
        named = f"{status.job} ({' '.join(status.overrides)})" if status.overrides \
            else status.job
    with claimed(out_dir):
        return run(run_cfg, tasks, out_dir, Path(inputs.cwd), out or sys.stdout, job=named)


def _plain_job(fields: dict[str, Any], out_dir: Path) -> int:
    """A plain run: by the warm worker when one waits (vbw.warm; the same output and exit
    code), else here."""
    outcome = warm.hand_over(fields, out_dir)
    if outcome is not None:
        return outcome.show(sys.stdout, sys.stderr)
    from vbw.sweep.status import JobInputs

    return _run_job(JobInputs(**fields), out_dir)


def job_label(num: int, overrides: list[str]) -> str:
    return f"job {num}: {' '.join(overrides)}" if overrides else f"job {num}"


def _one_write(line: str) -> None:
    """Print `line` with one write(2): workers of one launcher share the stdout pipe, and
    print's separate writes of text and newline could interleave with another worker's."""
    sys.stdout.flush()
    data = line.encode("utf-8", "backslashreplace")
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout replaced (a test's capture)
        sys.stdout.write(line)
        sys.stdout.flush()
        return
    while data:
        data = data[os.write(fd, data):]


def _sweep_job(cfg: DictConfig, hc: Any) -> None:
    """One job of a multirun: a header naming it, then the run; its outcome goes to
    status.json in its folder, never to this process (a launcher may run each job in
    another process or machine). Only an interrupt stops the sweep.

    In the launching process (Hydra's basic launcher) the job prints as it runs, under its
    header. Elsewhere (joblib's workers, submitit, Ray) jobs run at once and their output
    would interleave, so a job prints one line saying it started and keeps the rest in
    status.json; the end of the sweep prints it under the job's header (vbw.sweep.callback)."""
    from vbw.sweep.status import STARTED, JobStatus, read_launch, reports_in, write_status

    out_dir = Path(hc.runtime.output_dir)
    overrides = [redact_text(o) for o in hc.overrides.task]  # printed and recorded
    label = job_label(hc.job.num, overrides)
    here = _LAUNCHER_PID == os.getpid() and threading.current_thread() is threading.main_thread()
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
        status.inputs = job_inputs(cfg, hc)
        status.exit_code = _run_job(status.inputs, out_dir, status, captured)
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


@hydra.main(version_base="1.3", config_path=str(CONF), config_name=CONFIG_NAME)
def _hydra_main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hc = HydraConfig.get()
    redact_job_files(Path(hc.runtime.output_dir), hc.output_subdir,  # if the callback is off
                     hc.mode == RunMode.MULTIRUN)
    try:
        if hc.mode == RunMode.MULTIRUN:
            _sweep_job(cfg, hc)
            return
        out_dir = Path(hc.runtime.output_dir)
        with claimed(out_dir):  # vbw.launch's claim already, for a plain run it composed
            code = _plain_job(job_fields(cfg, hc), out_dir)
    except VbwError as e:
        _fail(e)
    except KeyboardInterrupt:
        print("vbw: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # `vbw | head`: the reader left; the report files are written
        _stdout_gone()
        sys.exit(141)
    except OSError as e:
        if e.errno not in FULL:
            _internal_error()
        _no_room(e)
    except Exception:  # noqa: BLE001  a bug: never mistaken for a gate (1) or usage (2)
        _internal_error()
    if code:
        sys.exit(code)


def _print_redacted(run: Any) -> None:
    """`run()` with what it prints to stdout redacted (vbw.redact) before it is shown."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            run()
    finally:
        sys.stdout.write(redact_text(buf.getvalue()))
        sys.stdout.flush()


def _register_resolvers() -> None:
    """Run folders carry the launching process's id, so two runs started in the same
    second differ. Cached, and registered on import: a launcher's worker process (joblib,
    submitit, Ray) imports this module to run a job and resolves the sweep folder from the
    launching process's cached value, so every job lands in one sweep folder."""
    if not OmegaConf.has_resolver("vbw_pid"):
        OmegaConf.register_new_resolver("vbw_pid", lambda: str(os.getpid()), use_cache=True)


_register_resolvers()


def main() -> None:
    global _LAUNCHER_PID
    _LAUNCHER_PID = os.getpid()
    try:
        argv = task_path_form(sys.argv[1:])
        composed = check_command_line(argv, job_name(_hydra_main))
    except VbwError as e:
        _fail(e)
    except Exception:  # noqa: BLE001
        _internal_error()
    finally:
        gc.enable()  # vbw.__main__ turns it off while the command line is composed
    sys.argv[1:] = argv
    if composed is not None:  # a plain run, already composed: not composed again
        try:
            run_composed(composed, _hydra_main)
        except VbwError as e:  # its folder is another run's (vbw.rundir)
            _fail(e)
        return
    warm.stop()  # a sweep, --cfg, --help: no plain job to hand over
    with sweep_dir_told() as told:  # a multirun's end says where its summary.json is
        try:
            if parse_args(argv).cfg is not None:  # Hydra prints the config: no credentials
                _print_redacted(_hydra_main)
            else:
                _hydra_main()
        except OSError as e:  # Hydra's own output (--help, --cfg) with no room for it
            if e.errno not in FULL:
                raise
            _no_room(e)
        sweep_dir = told()
    code = read_exit_code(sweep_dir) if sweep_dir is not None else None
    if code is None and parse_args(argv).multirun:
        print("vbw: internal error: the sweep ended without its summary (is "
              "hydra.callbacks.vbw_sweep removed?); its exit code is unknown", file=sys.stderr)
        code = INTERNAL_ERROR
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
