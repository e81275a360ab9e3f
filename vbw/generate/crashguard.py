"""Native generation in a child process, so that a crash of it is one line, not a dead vbw.

llama.cpp and the engines' compiled code run inside vbw's process; a fault there
(SIGSEGV, SIGILL, SIGBUS, SIGABRT, SIGFPE) would kill it without a word. `guarded` runs
the work in a child process (vbw.parallel.Child) that notes what it is doing before each native step
(`Marks`: one page of shared memory, so the note survives the child). The native stack's
own stderr (llama.cpp's asserts, faulthandler's Python stack) goes to a log file beside
the replay; what vbw prints goes where it always does. When the child dies by a signal,
the parent raises one EngineError naming the step, the signal and its likely cause.
"""

from __future__ import annotations

import faulthandler
import mmap
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from vbw.errors import EngineError, VbwError
from vbw.parallel import Child, Event, Recorder, replay

T = TypeVar("T")
Work = Callable[["Marks", TextIO], T]
# signal number, last step -> the line's text (the caller knows the settings that matter)
Explain = Callable[[int, str], str]
_GRACE_SECONDS = 5.0  # how long an interrupted child may take to leave before it is killed


class Marks:
    """What the child is doing, in shared memory that outlives it: `marks("item 3, arm
    constrained[answer]")` before a native step, `marks.last()` in the parent after."""

    SIZE = 1024

    def __init__(self) -> None:
        self._page = mmap.mmap(-1, self.SIZE)  # anonymous and shared: the child's writes show

    def __call__(self, step: str) -> None:
        data = step.encode("utf-8", "replace")[: self.SIZE - 2]
        self._page[2:2 + len(data)] = data
        self._page[:2] = len(data).to_bytes(2, "little")

    def last(self) -> str:
        n = int.from_bytes(self._page[:2], "little")
        return self._page[2:2 + n].decode("utf-8", "replace") or "starting"


def signal_name(number: int) -> str:
    """"SIGSEGV (Segmentation fault)", or "signal N" for one Python does not name."""
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    described = signal.strsignal(sig)
    return f"{sig.name} ({described})" if described else sig.name


def guarded(work: Work[T], err: TextIO, log: Path, explain: Explain) -> T:
    """`work(marks, err)` in a child process; its result (which must pickle) back here.

    A VbwError it raises is raised here; an interrupt is one here too (the child is given
    a few seconds to leave, then killed). A death by a signal raises EngineError with
    `explain(signal, marks.last())`. The native stack's stderr goes to `log`, deleted if
    empty when the child ends well."""
    marks = Marks()
    err.flush()
    child = Child(lambda: _child(work, marks, err, log))
    data = child.receive(watch=False, grace=_GRACE_SECONDS) or b""
    if os.WIFSIGNALED(child.status):
        raise EngineError(explain(os.WTERMSIG(child.status), marks.last()))
    return _outcome(data, child.status, err, log)


def _child(work: Work[Any], marks: Marks, err: TextIO, log: Path) -> Any:
    """Run the work with stderr's descriptor on the log, vbw's own output as before; the
    outcome and what vbw printed without a descriptor, to send back."""
    events: list[Event] = []
    own_err = _own_stream(err, events)
    sys.stderr = own_err
    log_file = open(log, "w", encoding="utf-8")  # noqa: SIM115  closed by leaving
    os.dup2(log_file.fileno(), 2)  # llama.cpp's and ggml's own messages
    faulthandler.enable(log_file)
    try:
        result: tuple[str, Any] = ("ok", work(marks, own_err))
    except VbwError as e:
        result = ("error", e)
    except KeyboardInterrupt:
        result = ("interrupt", None)
    except BaseException:  # noqa: BLE001  a bug: its traceback, and exit 3 as in one process
        result = ("bug", traceback.format_exc())
    own_err.flush()
    return result, events


def _own_stream(err: TextIO, events: list[Event]) -> TextIO:
    """Where the child's own output goes: a copy of err's descriptor (it writes there as
    it goes), or, for a stream with none, a recording the parent replays."""
    try:
        fd = os.dup(err.fileno())
    except (AttributeError, OSError, ValueError):
        return Recorder(events, "err")
    return open(fd, "w", encoding=getattr(err, "encoding", None) or "utf-8",
                errors="backslashreplace", buffering=1)


def _outcome(data: bytes, status: int, err: TextIO, log: Path) -> Any:
    """The child's result, its recorded output written to err first."""
    code = os.waitstatus_to_exitcode(status)
    try:
        (kind, value), events = pickle.loads(data)
    except Exception:  # noqa: BLE001  nothing (or garbage) came: the child left early
        raise EngineError(f"the generation process ended with exit code {code} and no "
                          f"result; its native messages are in {log}") from None
    replay(events, err, err)
    _drop_if_empty(log)
    if kind == "ok":
        return value
    if kind == "error":
        raise value
    if kind == "interrupt":
        raise KeyboardInterrupt
    err.write(value)
    raise RuntimeError("the generation process failed (traceback above)")


def _drop_if_empty(log: Path) -> None:
    try:
        if log.stat().st_size == 0:
            log.unlink()
    except OSError:
        pass
