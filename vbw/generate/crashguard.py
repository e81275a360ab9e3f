"""Native generation in a child process (vbw.parallel.Child), so that a crash of it is one
line naming the last step it marked, not a dead vbw. The native stack's own stderr goes to
a log file beside the replay; what vbw prints goes where it always does.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from vbw.errors import EngineError, VbwError
from vbw.parallel import Child, Event, Note, Recorder, replay

T = TypeVar("T")
Work = Callable[[Note, TextIO], T]  # marks: `marks("item 3, arm a")` before a native step
Explain = Callable[[int, str], str]  # signal number, last step -> the error's text
_GRACE_SECONDS = 5.0  # how long an interrupted child may take to leave before it is killed


def signal_name(number: int) -> str:
    """"SIGSEGV (Segmentation fault)", or "signal N" for one Python does not name."""
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    described = signal.strsignal(sig)
    return f"{sig.name} ({described})" if described else sig.name


def guarded(work: Work[T], err: TextIO, log: Path, explain: Explain) -> T:
    """`work(marks, err)` in a child process; its result (which must pickle) back here, or
    the VbwError or interrupt it raised. A death by a signal raises EngineError with
    `explain(signal, marks.last())`; an interrupt here kills the child after a grace time.
    The native stack's stderr goes to `log`, deleted if empty when the child ends well."""
    marks = Note("starting")  # what the child is doing
    err.flush()
    child = Child(lambda: _child(work, marks, err, log))
    got = child.result(watch=False, grace=_GRACE_SECONDS)
    if os.WIFSIGNALED(child.status):
        raise EngineError(explain(os.WTERMSIG(child.status), marks.last()))
    if got is None:
        raise EngineError(f"the generation process ended with exit code "
                          f"{os.waitstatus_to_exitcode(child.status)} and no result; its "
                          f"native messages are in {log}")
    (value, raised), events = got
    replay(events, err, err)
    if log.exists() and log.stat().st_size == 0:
        log.unlink()
    if isinstance(raised, str):  # a bug: its traceback, and exit 3 as in one process
        err.write(raised)
        raise RuntimeError("the generation process failed (traceback above)")
    if raised is not None:
        raise raised
    return value


def _child(work: Work[Any], marks: Note, err: TextIO, log: Path) -> Any:
    """In the child: the work with fd 2 on the log; its value or what it raised, and what
    it printed without a descriptor."""
    events: list[Event] = []
    try:  # vbw's own output: on a copy of err's descriptor, else recorded
        fd = os.dup(err.fileno())
        own: TextIO = open(fd, "w", encoding=getattr(err, "encoding", None) or "utf-8",
                           errors="backslashreplace", buffering=1)
    except (AttributeError, OSError, ValueError):
        own = Recorder(events, "err")
    sys.stderr = own
    log_file = open(log, "w", encoding="utf-8")  # noqa: SIM115  closed by leaving
    os.dup2(log_file.fileno(), 2)  # llama.cpp's and ggml's own messages
    faulthandler.enable(log_file)
    try:
        result: tuple[Any, Any] = (work(marks, own), None)
    except (VbwError, KeyboardInterrupt) as e:
        result = (None, e)
    except BaseException:  # noqa: BLE001
        result = (None, traceback.format_exc())
    own.flush()
    return result, events
