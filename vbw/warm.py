"""A warm worker: the scoring stack imported in a forked process while `vbw` composes.

Why: most of a plain `vbw` run's start-up is imports (issue 22: the demo within 2x the
time a fresh interpreter takes to import the dependencies). They fall in two independent
sets: Hydra and OmegaConf, to compose the command line and set up the job (output
folder, `.hydra/` files, logging), and pydantic, numpy, jsonschema, Jinja and vbw's own
models and modes, to run it. So the console script (vbw.__main__) forks first, with only
the standard library loaded: the worker imports the second set and waits, while this
process imports the first, composes, and lets Hydra set the job up; then the job (the
composed config as plain data, and its folder) goes down a pipe to the worker, and this
process waits. On two cores both sets load at once.

What a one-process run shows is kept (tests/test_warm.py runs both and compares):
- Output: the worker records what the run prints, stdout and stderr in order, and this
  process writes it out when the run ends (as vbw.modes.forked's child does); then the
  exit code is this process's. A VbwError the run raises comes back pickled and is raised
  here, after the output before it: the same one line, the same exit code.
- A run that may generate (mode=live; mode=auto without a recorded replay) is refused by
  the worker before it does anything, and runs here: progress shows as it goes, and the
  model lives in the process the user interrupts. So does a sweep's job.
- Any other end of the worker (a bug, a crash, a kill, a SIGSTOP: a stopped worker is
  killed) sends nothing, and this process
  runs the job itself, from the start: the traceback and the exit code are its own. A
  worker's files are the ones the same run writes again (reports are written whole and
  atomically; the folder is the caller's claim, vbw.rundir, held while it waits).
- A worker that gets no job (a sweep, --help, --cfg, a usage error) is killed and reaped,
  at the latest when this process exits.
Not started on one core, where os.fork does not exist, while another thread runs (a lock
it holds would never be released in the worker), with VBW_SCORING_PROCESSES=1 (one
process for everything; vbw.score.split's knob), with VBW_WARM=0, or when the command
line holds a flag (`-m`, `--help`, `--cfg`, ...: no plain run to hand over).
"""

from __future__ import annotations

import atexit
import gc
import os
import pickle
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vbw.pipes import (Event, Recorder, fork, leave, receive_all, receive_from, replay,
                       send_all)
from vbw.pipes import stop as stop_child

ENV = "VBW_WARM"  # "0": never fork a warm worker
_SCORING_ENV = "VBW_SCORING_PROCESSES"  # vbw.score.split.ENV ("1": one process)
REFUSED = "refused"  # the job may generate: it runs in the calling process


@dataclass
class Worker:
    """This process's end of a warm worker: its pid and the two pipes."""

    pid: int
    job_w: int      # the job goes down this pipe (closing it unused tells the worker to go)
    result_r: int   # its result comes back up this one, closed when the worker exits


_worker: Worker | None = None


def wanted(argv: list[str]) -> bool:
    """Whether to fork a warm worker for this command line (see the docstring)."""
    if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return False
    threading = sys.modules.get("threading")  # a fork copies the calling thread only
    if threading is not None and threading.active_count() > 1:
        return False
    if os.environ.get(ENV, "").strip() == "0" or os.environ.get(_SCORING_ENV, "").strip() == "1":
        return False
    return not any(a.startswith("-") for a in argv)


def start(argv: list[str]) -> None:
    """Fork the warm worker when `argv` may be a plain run (call before heavy imports)."""
    global _worker
    if _worker is not None or not wanted(argv):
        return
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        stream.flush()
    job_r, job_w = os.pipe()
    result_r, result_w = os.pipe()
    try:
        pid = fork()  # the worker dies with this process: `kill` stops the run, as in one
    except OSError:  # no process to be had: one process, as without fork
        for fd in (job_r, job_w, result_r, result_w):
            os.close(fd)
        return
    if pid == 0:
        os.close(job_w)
        os.close(result_r)
        _serve(job_r, result_w)
    os.close(job_r)
    os.close(result_w)
    _worker = Worker(pid, job_w, result_r)
    atexit.register(stop)


def stop() -> None:
    """Kill and reap the worker if it is still there (it was not needed)."""
    global _worker
    worker, _worker = _worker, None
    if worker is None:
        return
    for fd in (worker.job_w, worker.result_r):
        try:
            os.close(fd)
        except OSError:
            pass
    stop_child(worker.pid)


@dataclass
class Outcome:
    """What the worker's run printed, and how it ended: an exit code or a VbwError."""

    events: list[Event]
    code: int | None
    error: BaseException | None

    def show(self, out: TextIO, err: TextIO) -> int:
        """Write the output here, in order; return the exit code or raise the error."""
        replay(self.events, out, err)
        if self.error is not None:
            raise self.error
        assert self.code is not None
        return self.code


def hand_over(fields: dict[str, Any], out_dir: Path) -> Outcome | None:
    """Run the plain job in the warm worker; None if there is none or it did not run it
    (it may generate, or the worker failed): then the caller runs it."""
    global _worker
    worker, _worker = _worker, None
    if worker is None:
        return None
    try:
        try:
            send_all(worker.job_w, pickle.dumps((fields, str(out_dir), dict(os.environ)),
                                                protocol=pickle.HIGHEST_PROTOCOL))
        except BrokenPipeError:  # the worker is gone
            pass
        os.close(worker.job_w)
        worker.job_w = -1
        data = receive_from(worker.result_r, worker.pid)
        if data is None:  # found stopped (SIGSTOP): it is killed, and the job runs here
            _worker = worker
            stop()
            return None
        _, status = os.waitpid(worker.pid, 0)
    except BaseException:  # an interrupt while waiting: the worker goes too
        _worker = worker
        stop()
        raise
    os.close(worker.result_r)
    if os.waitstatus_to_exitcode(status) != 0 or not data:
        return None
    try:
        got = pickle.loads(data)
    except Exception:  # noqa: BLE001  a broken record: run it here
        return None
    return None if got == REFUSED else got


def _serve(job_r: int, result_w: int) -> None:
    """In the worker: import the scoring stack, wait for the job, run it, send back the
    outcome; leave as a forked child does (vbw.pipes.leave: its own exit work only)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C ends it; the caller decides
        _prepare()
        gc.freeze()  # what the imports built lives as long as the worker: never collected
        gc.enable()  # (vbw.__main__ turned it off for start-up)
        data = receive_all(job_r)
        if data:
            fields, out_dir, environ = pickle.loads(data)
            got = _run_job(fields, Path(out_dir), environ)
            send_all(result_w, pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    except BaseException:  # noqa: BLE001  nothing sent: the caller runs the job itself
        pass
    finally:
        leave(code)


def _prepare() -> None:
    """In the worker, while it waits: import what a plain run needs (the same modules the
    calling process would import on its way to the run)."""
    import vbw.app  # noqa: F401
    import vbw.modes.replay  # noqa: F401  the default mode, and the scoring stack under it
    import vbw.sweep.status  # noqa: F401


def _run_job(fields: dict[str, Any], out_dir: Path, environ: dict[str, str]) -> Outcome | str:
    """In the worker: the plain job, as vbw.cli runs it, with what it prints recorded;
    REFUSED, before anything is done, if it may generate. The process state Hydra's job
    set-up changed after the fork (the working folder, `hydra.job.env_set`) is the
    caller's."""
    from vbw.app import run
    from vbw.errors import VbwError
    from vbw.modes import only_reads
    from vbw.sweep.status import JobInputs

    os.environ.clear()
    os.environ.update(environ)
    events: list[Event] = []
    out, err = Recorder(events, "out"), Recorder(events, "err")
    sys.stdout, sys.stderr = out, err  # what is printed without a stream is kept too
    try:
        inputs = JobInputs(**fields)
        os.chdir(inputs.cwd)
        cfg, tasks = inputs.resolve()
        if not only_reads(cfg, tasks, Path(inputs.cwd)):
            return REFUSED  # an unknown mode's error, too, is the caller's to raise
        # the folder is the caller's claim (vbw.rundir), held while it waits for this
        return Outcome(events, run(cfg, tasks, out_dir, Path(inputs.cwd), out, err), None)
    except VbwError as e:
        return Outcome(events, None, e)
