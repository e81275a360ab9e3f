"""vbw's one way to use several processes (imports nothing of vbw): `ordered` runs units in
`count()` forked processes, results and output in unit order, a unit that fails in a child
(or a dead or stopped child's) run again here so the first error is raised here; `limited`
runs each unit in a child of its own under a time limit, a unit whose child dies or runs
past it given a `Lost`; `Child` is one forked process running one callable; `Note`, a
short text a child leaves behind.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import select
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, NoReturn, TextIO, TypeVar

ENV = "VBW_PROCESSES"  # "1": one process; "2" or more: that many, forced; unset: the cores
U = TypeVar("U")
R = TypeVar("R")
Event = tuple[str, str | None]  # ("out" or "err", the text written; None: a flush)
POLL = 0.2  # seconds between looks at a child that sends nothing

_AT_LEAVE: list[Callable[[], None]] = []


def setting() -> int | None:
    """VBW_PROCESSES as a number (None: unset or not a number; at least 1)."""
    value = os.environ.get(ENV, "").strip()
    return max(1, int(value)) if value.isdigit() else None


def count(forkable: bool = True) -> int:
    """How many processes to use: 1 if not `forkable`, without os.fork, if VBW_PROCESSES is
    1 (as in `ordered`'s units) or, unless set, while another thread runs (a fork copies
    this thread only); else VBW_PROCESSES or the cores."""
    chosen = setting()
    if not forkable or not hasattr(os, "fork") or chosen == 1:
        return 1
    if chosen is None and threading.active_count() > 1:
        return 1
    return chosen or os.cpu_count() or 1


def at_start(fn: Callable[[], None]) -> None:
    """Run `fn` in every child process as it starts (before its work)."""
    os.register_at_fork(after_in_child=fn)


def at_leave(fn: Callable[[], None]) -> None:
    """Run `fn` when a forked child leaves (`leave`); a normal exit is atexit's."""
    _AT_LEAVE.append(fn)


def leave(code: int) -> NoReturn:
    """End a forked child: its `at_leave` work, then os._exit (no parent's handler runs)."""
    for fn in _AT_LEAVE:
        try:
            fn()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


def _send(fd: int, value: Any) -> None:
    """Pickle `value` down a pipe, all of it (os.write may take part)."""
    view = memoryview(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    while view:
        view = view[os.write(fd, view):]


def _in_child(parent: int, write: int, inbox: int, work: Callable[..., Any]) -> NoReturn:
    """In a new child: die with `parent` (Linux's PR_SET_PDEATHSIG), send `work`'s result."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    code = 1
    try:
        if os.getppid() == parent:
            _send(write, work(lambda: pickle.load(open(inbox, "rb"))) if inbox >= 0 else work())
            code = 0
    except BaseException:  # noqa: BLE001  the parent does the work itself
        pass
    leave(code)


class Child:
    """`work()` in a forked process that dies with this one; `result()` waits for its
    return value, `cancel()` kills it; either reaps it. With `inbox`, `work(receive)` gets
    a call that waits for what this process `send`s. No process to be had: no result."""

    def __init__(self, work: Callable[..., Any], inbox: bool = False) -> None:
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        self.pid, self._fd, self._inbox, self.status = 0, -1, -1, 0
        self.timed_out = False
        try:
            read, write = os.pipe()
            box = os.pipe() if inbox else (-1, -1)
            parent, self.pid = os.getpid(), os.fork()
        except OSError:
            return
        if self.pid == 0:
            _close(read, box[1])
            _in_child(parent, write, box[0], work)
        _close(write, box[0])
        self._fd, self._inbox = read, box[1]

    def send(self, value: Any) -> None:
        """Send `value` to the child's inbox (once)."""
        fd, self._inbox = self._inbox, -1
        try:
            _send(fd, value)
        except OSError:  # the child is gone: result() says so
            pass
        finally:
            _close(fd)

    def result(self, watch: bool = True, grace: float = 0.0,
               timeout: float | None = None) -> Any | None:
        """The child's result once it exited (wait status in `status`); None if it raised,
        died, (`watch`) was found stopped or ran past `timeout` seconds (then killed, and
        `timed_out` set). An interrupt kills it after `grace` seconds."""
        if self._fd < 0:
            return None
        chunks = []
        end = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                if not select.select([self._fd], [], [], POLL)[0]:
                    if (watch and _stopped(self.pid)) or (end is not None
                                                          and time.monotonic() > end):
                        self.timed_out = end is not None and time.monotonic() > end
                        self.cancel()
                        return None
                elif chunk := os.read(self._fd, 1 << 20):
                    chunks.append(chunk)
                else:
                    break
            self.status = os.waitpid(self.pid, 0)[1]
        except BaseException:
            self.cancel(grace)
            raise
        self._close()
        try:
            return pickle.loads(b"".join(chunks)) if self.status == 0 else None
        except Exception:  # noqa: BLE001
            return None

    def cancel(self, grace: float = 0.0) -> None:
        """Kill (after `grace` seconds for it to leave) and reap the child, if still here."""
        if self._fd >= 0:
            try:
                select.select([self._fd], [], [], grace)
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self._close()

    def _close(self) -> None:
        _close(self._fd, self._inbox)
        self._fd = self._inbox = -1


def _close(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _stopped(pid: int) -> bool:
    try:  # looked at, never reaped (WNOWAIT)
        return os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG | os.WNOWAIT) is not None
    except (OSError, AttributeError):
        return False


class Note:
    """A short text in memory shared with children forked after it: `note(text)` in one,
    `note.last()` here after it ended (by a signal, too; `empty` if none)."""

    SIZE = 1024

    def __init__(self, empty: str = "") -> None:
        self._page, self._empty = mmap.mmap(-1, self.SIZE), empty

    def __call__(self, text: str) -> None:
        data = text.encode("utf-8", "replace")[: self.SIZE - 2]
        self._page[2:2 + len(data)] = data
        self._page[:2] = len(data).to_bytes(2, "little")

    def last(self) -> str:
        n = int.from_bytes(self._page[:2], "little")
        return self._page[2:2 + n].decode("utf-8", "replace") or self._empty


class Recorder(io.TextIOBase):
    """A text stream that keeps what is written to it in `events` (for `replay`)."""

    def __init__(self, events: list[Event], name: str) -> None:
        super().__init__()
        self._events, self._name = events, name

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self._events.append((self._name, s))
        return len(s)

    def flush(self) -> None:
        self._events.append((self._name, None))


def recording() -> tuple[list[Event], TextIO, TextIO]:
    """Recorders made sys.stdout and sys.stderr, and the events they keep."""
    events: list[Event] = []
    sys.stdout, sys.stderr = Recorder(events, "out"), Recorder(events, "err")
    return events, sys.stdout, sys.stderr


def replay(events: list[Event], out: TextIO, err: TextIO) -> None:
    """Write what Recorders kept to `out` and `err`, in the order it was written."""
    for name, text in events:
        stream = out if name == "out" else err
        stream.flush() if text is None else stream.write(text)


Printing = Callable[[U, TextIO, TextIO], R]  # a unit, its stdout and stderr -> its result


def _run(fn: Printing[U, R], units: Sequence[U]) -> list[tuple[list[Event], R]]:
    """In a child: the units in order, each with what it printed, until one fails."""
    events, out, err = recording()
    done = []
    for unit in units:
        start = len(events)
        try:
            value = fn(unit, out, err)
        except BaseException:  # noqa: BLE001  the parent runs it again, to fail there
            break
        done.append((events[start:], value))
    return done


def ordered(fn: Printing[U, R], units: Sequence[U], processes: int | None = None,
            out: TextIO | None = None, err: TextIO | None = None) -> list[R]:
    """`fn(unit, out, err)` of every unit in `processes` processes (`count()` if None), in
    unit order; see the module docstring. `out`/`err`: sys's if None."""
    out, err = out or sys.stdout, err or sys.stderr
    n = min(count() if processes is None else processes, len(units))
    if n < 2:
        return [fn(u, out, err) for u in units]
    cuts = [len(units) * i // n for i in range(n + 1)]
    runs = [units[a:b] for a, b in zip(cuts, cuts[1:])]
    out.flush()
    err.flush()
    before, os.environ[ENV] = os.environ.get(ENV), "1"  # the units do not split again
    children = [Child(lambda r=r: _run(fn, r)) for r in runs[1:]]
    try:
        values = [fn(u, out, err) for u in runs[0]]
        for child, run in zip(children, runs[1:]):
            done = child.result() or []
            for events, value in done:
                replay(events, out, err)
                values.append(value)
            values += [fn(u, out, err) for u in run[len(done):]]
        return values
    finally:
        for child in children:
            child.cancel()
        os.environ.pop(ENV, None)
        if before is not None:
            os.environ[ENV] = before


class Lost(NamedTuple):
    """No result from `limited`'s child: it ran past the limit, or died (wait `status`)."""

    timed_out: bool
    status: int


def limited(fn: Callable[[U], R], units: Sequence[U], seconds: float,
            at_start: Callable[[], None] = lambda: None) -> list[R | Lost]:
    """`fn(unit)` of every unit in unit order, each in a child of its own (`at_start` first
    there), `count()` at once, each killed `seconds` after its start (then a Lost, as for
    one that dies); here, unlimited, without a process to be had."""
    done: dict[int, R | Lost] = {}
    running: deque[tuple[int, Child, float]] = deque()
    todo = deque(enumerate(units))
    while todo or running:
        while todo and len(running) < max(1, count()):
            i, unit = todo.popleft()
            child = Child(lambda unit=unit: (at_start(), fn(unit))[1])
            if child.pid:
                running.append((i, child, time.monotonic()))
            else:
                done[i] = fn(unit)
        if running:
            i, child, start = running.popleft()
            got = child.result(timeout=max(0.0, seconds - (time.monotonic() - start)))
            done[i] = got if got is not None else Lost(child.timed_out, child.status)
    return [done[i] for i in range(len(units))]
