"""A warm worker: the scoring stack imported in a second process while `vbw` composes.

The console script (vbw.cli.console) starts it first thing (vbw.parallel.Child), with only
the standard library loaded: it imports pydantic, numpy, jsonschema, Jinja and vbw's modes
while this process imports Hydra and OmegaConf, composes and sets the job up; then the job
(the composed config as plain data, and its folder) goes down a pipe to the worker, which
runs it recording what it prints, and sends back that output and the exit code or the
VbwError, shown here as the one-process run shows them. A run that may generate is
refused by the worker once its config is validated and its tasks loaded, and runs here on
those; a worker that fails in any way (or is found stopped)
leaves the job to this process, from the start; an unused one is killed at exit.
Not started when vbw.parallel.count() is 1 or the command line holds a flag.
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

from vbw.parallel import Child, Event, Recorder, count, replay, send_all



_worker: tuple[Child, int] | None = None  # the worker and the write end of its job pipe


def wanted(argv: list[str]) -> bool:
    """Whether to start a warm worker for this command line (see the docstring)."""
    return count() > 1 and not any(a.startswith("-") for a in argv)


def start(argv: list[str]) -> None:
    """Start the warm worker when `argv` may be a plain run (call before heavy imports)."""
    global _worker
    if _worker is not None or not wanted(argv):
        return
    job_r, job_w = os.pipe()
    try:
        child = Child(lambda: _serve(job_r, job_w))  # dies with this process, as one would
    except OSError:  # no process to be had: one process
        os.close(job_r)
        os.close(job_w)
        return
    os.close(job_r)
    _worker = (child, job_w)
    atexit.register(stop)


def stop() -> None:
    """Kill and reap the worker if it is still there (it was not needed)."""
    global _worker
    worker, _worker = _worker, None
    if worker is not None:
        _close(worker[1])
        worker[0].cancel()


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


@dataclass
class Refused:
    """The job may generate, so the calling process runs it: on the config and tasks the
    worker validated and loaded (`resolved`), not again, after what loading them printed."""

    events: list[Event]
    resolved: tuple[Any, Any]

    def show(self, out: TextIO, err: TextIO) -> tuple[Any, Any]:
        """Write what loading printed here, in order; return the config and tasks."""
        replay(self.events, out, err)
        return self.resolved


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


def hand_over(fields: dict[str, Any], out_dir: Path) -> Outcome | Refused | None:
    """Run the plain job in the warm worker; Refused if the job may generate, None if there
    is no worker or it failed: then the caller runs the job."""
    global _worker
    worker, _worker = _worker, None
    if worker is None:
        return None
    child, job_w = worker
    try:
        send_all(job_w, pickle.dumps((fields, str(out_dir), dict(os.environ)),
                                     protocol=pickle.HIGHEST_PROTOCOL))
    except BrokenPipeError:  # the worker is gone
        pass
    finally:
        _close(job_w)
    got = child.result()  # an interrupt while waiting stops the worker too
    return got if isinstance(got, (Outcome, Refused)) else None


def _serve(job_r: int, job_w: int) -> Outcome | Refused | None:
    """In the worker: import the scoring stack, wait for the job, run it; the outcome (None:
    no job came)."""
    os.close(job_w)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C ends it; the caller decides
    _prepare()
    gc.freeze()  # what the imports built lives as long as the worker: never collected
    gc.enable()  # (vbw.cli.console turned it off for start-up)
    chunks = []
    while chunk := os.read(job_r, 1 << 20):
        chunks.append(chunk)
    if not chunks:
        return None
    fields, out_dir, environ = pickle.loads(b"".join(chunks))
    return _run_job(fields, Path(out_dir), environ)


def _prepare() -> None:
    """In the worker, while it waits: import what a plain run needs (the same modules the
    calling process would import on its way to the run)."""
    import vbw.cli.job  # noqa: F401
    import vbw.modes.replay  # noqa: F401  the default mode, and the scoring stack under it


def _run_job(fields: dict[str, Any], out_dir: Path,
             environ: dict[str, str]) -> Outcome | Refused:
    """In the worker: the plain job, as vbw.cli.hydra_job runs it, with what it prints
    recorded; Refused, once validated and before anything is run, if it may generate. The
    process state Hydra's job set-up changed after the worker started (the working folder,
    `hydra.job.env_set`) is the caller's."""
    from vbw.cli.job import JobInputs, run
    from vbw.errors import VbwError
    from vbw.modes import only_reads

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
            return Refused(events, (cfg, tasks))  # an unknown mode's error, too
        # the folder is the caller's claim (vbw.cli.run_folder), held while it waits
        return Outcome(events, run(cfg, tasks, out_dir, Path(inputs.cwd), out, err), None)
    except VbwError as e:
        return Outcome(events, None, e)
