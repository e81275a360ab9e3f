"""A warm worker: a child (vbw.parallel.Child) that imports the scoring stack while this
process composes the command line, then runs the plain job sent to it and sends back what
it printed and how it ended. A job that may generate is refused (after its config is
validated and tasks loaded), and one the worker fails at runs here; see
docs/performance.md ("Start-up").
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vbw.parallel import Child, Event, count, recording, replay

_worker: Child | None = None


def wanted(argv: list[str]) -> bool:
    """Whether to start a worker: several processes, and a command line with no flag."""
    return count() > 1 and not any(a.startswith("-") for a in argv)


def start(argv: list[str]) -> None:
    """Start the worker when `argv` may be a plain run (call before heavy imports)."""
    global _worker
    if _worker is None and wanted(argv):
        _worker = Child(_serve, inbox=True)  # no process to be had: no result, one process
        atexit.register(stop)


def stop() -> None:
    """Kill and reap the worker if it is still there (it was not needed)."""
    global _worker
    if _worker is not None:
        _worker, worker = None, _worker
        worker.cancel()


@dataclass
class Outcome:
    """What the worker's run printed, and how it ended: an exit code, a VbwError, or (it was
    refused) the config and tasks it `resolved`, for the caller to run."""

    events: list[Event]
    code: int | None = None
    error: BaseException | None = None
    resolved: tuple[Any, Any] | None = None

    def show(self, out: TextIO, err: TextIO) -> Any:
        """Write what it printed here, in order; the exit code, the resolved pair, or raise."""
        replay(self.events, out, err)
        if self.error is not None:
            raise self.error
        return self.code if self.resolved is None else self.resolved


def hand_over(fields: dict[str, Any], out_dir: Path) -> Outcome | None:
    """Run the plain job in the worker; None if there is none or it failed."""
    global _worker
    if _worker is None:
        return None
    _worker, worker = None, _worker
    worker.send((fields, out_dir, dict(os.environ)))
    got = worker.result()  # an interrupt while waiting stops the worker too
    return got if isinstance(got, Outcome) else None


def _serve(inbox: Callable[[], Any]) -> Outcome | None:
    """In the worker: import the scoring stack, wait for the job, run it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # ^C ends it; the caller decides
    _prepare()
    gc.freeze()  # what the imports built lives as long as the worker
    gc.enable()  # (vbw.cli.console turned it off for start-up)
    job = inbox()
    return None if job is None else _run_job(*job)


def _prepare() -> None:
    """Import what a plain run needs (what the caller would import on its way to it)."""
    import vbw.cli.job  # noqa: F401
    import vbw.modes.replay  # noqa: F401  the default mode, and the scoring stack under it


def _run_job(fields: dict[str, Any], out_dir: Path, environ: dict[str, str]) -> Outcome:
    """The plain job as vbw.cli.hydra_job runs it, in the caller's environment and folder,
    what it prints recorded; refused, before anything runs, if it may generate."""
    from vbw.cli.job import JobInputs, run
    from vbw.errors import VbwError
    from vbw.modes import only_reads

    os.environ.clear()
    os.environ.update(environ)
    events, out, err = recording()
    try:
        inputs = JobInputs(**fields)
        os.chdir(inputs.cwd)
        cfg, tasks = inputs.resolve()
        if not only_reads(cfg, tasks, Path(inputs.cwd)):
            return Outcome(events, resolved=(cfg, tasks))  # an unknown mode's error, too
        # the folder is the caller's claim (vbw.cli.run_folder), held while it waits
        return Outcome(events, run(cfg, tasks, out_dir, Path(inputs.cwd), out, err,
                                   arms_given=inputs.arms_given, first_given=inputs.first_given))
    except VbwError as e:
        return Outcome(events, error=e)
