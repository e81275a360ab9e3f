"""vbw's one way to use several cores: forked processes whose results come back in order.

`ordered(fn, units)` runs `fn` on each unit, the units cut into one contiguous run per
process (`count()`; this process does the first), and returns the results in unit order,
with what the units printed replayed in that order. A unit that fails in a child, or a
child that dies or is found stopped, has its units run again here, so the first error is
raised here, in unit order, with this process's traceback. `Child` is the primitive
beneath: one forked process running one callable, its pickled result sent back through a
pipe (vbw.cli.warm_worker's worker, report.html's item data, the native crash guard use it alone).
The count is read from one setting, VBW_PROCESSES ("1": one process; "2" or more: that
many, forced; unset: the cores). Imports nothing of vbw (vbw.cli.warm_worker uses it first thing).
"""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO, TypeVar

ENV = "VBW_PROCESSES"
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
    """How many processes to use now: 1 without os.fork, while another thread runs (unless
    forced), when VBW_PROCESSES=1 or inside `ordered`'s units; else the setting or the
    cores. `forkable=False` (the caller's own reason) gives 1."""
    chosen = setting()
    if not forkable or not hasattr(os, "fork") or chosen == 1:
        return 1
    if chosen is None and threading.active_count() > 1:  # a fork copies this thread only
        return 1
    return chosen or os.cpu_count() or 1


def forced() -> bool:
    """Whether VBW_PROCESSES asks for several processes whatever the size of the work."""
    return (setting() or 1) > 1 and hasattr(os, "fork")


@contextmanager
def one_process() -> Iterator[None]:
    """Within: `count()` is 1 (units already spread over the cores do not split again)."""
    before = os.environ.get(ENV)
    os.environ[ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def at_start(fn: Callable[[], None]) -> None:
    """Run `fn` in every child process as it starts (before its work)."""
    os.register_at_fork(after_in_child=fn)


def at_leave(fn: Callable[[], None]) -> None:
    """Run `fn` when a forked child leaves (see `leave`); a normal exit is atexit's."""
    _AT_LEAVE.append(fn)


def leave(code: int) -> NoReturn:
    """End a forked child: its own exit work (`at_leave`), then os._exit, so no handler or
    buffer of its parent's runs twice."""
    for fn in _AT_LEAVE:
        try:
            fn()
        except Exception:  # noqa: BLE001  exit work is best effort, as atexit's is
            pass
    os._exit(code)


def send_all(fd: int, data: bytes) -> None:
    """Write all of `data` to a pipe (os.write may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _die_with_parent(parent: int) -> None:
    """Be killed when `parent` dies (Linux's PR_SET_PDEATHSIG), or leave if it has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def stopped(pid: int) -> bool:
    """Whether child `pid` is stopped (SIGSTOP...): looked at, never reaped (WNOWAIT)."""
    if not hasattr(os, "waitid"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG | os.WNOWAIT) is not None
    except OSError:
        return False


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


class Child:
    """`work()` in a forked process that dies with this one; its return value (which must
    pickle) comes back whole through a pipe. `result()` waits for it; `cancel()` kills a
    child no longer wanted. Either reaps it."""

    def __init__(self, work: Callable[[], Any]) -> None:
        _flush()  # nothing buffered is written twice
        read, write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _die_with_parent(parent)
            code = 1
            try:
                send_all(write, pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
            except BaseException:  # noqa: BLE001  the parent does the work itself
                pass
            finally:
                leave(code)
        os.close(write)
        self.pid, self._fd, self.status = pid, read, 0

    def fileno(self) -> int:
        """The pipe the result comes by: readable once it is sent or the child is gone."""
        return self._fd

    def receive(self, watch: bool = True, grace: float = 0.0) -> bytes | None:
        """What the child sent, once it has exited (its wait status in `status`); None if
        it was found stopped (`watch`; it is then killed). An interrupt kills it too
        (after `grace` seconds for it to leave)."""
        chunks = []
        try:
            while True:
                ready, _, _ = select.select([self._fd], [], [], POLL)
                if not ready:
                    if watch and stopped(self.pid):
                        self.cancel()
                        return None
                    continue
                if not (chunk := os.read(self._fd, 1 << 20)):
                    break
                chunks.append(chunk)
            self.status = os.waitpid(self.pid, 0)[1]
        except BaseException:
            self.cancel(grace)
            raise
        self._close()
        return b"".join(chunks)

    def result(self) -> Any | None:
        """The child's result; None if it raised, died, was found stopped or sent garbage."""
        if self._fd < 0:
            return None
        data = self.receive()
        if not data or os.waitstatus_to_exitcode(self.status) != 0:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001
            return None

    def cancel(self, grace: float = 0.0) -> None:
        """Kill (after `grace` seconds for it to leave) and reap the child, if still here."""
        if self._fd < 0:
            return
        try:
            if grace:
                select.select([self._fd], [], [], grace)
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self._close()

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class Recorder(io.TextIOBase):
    """A text stream that keeps what is written to it, in order with its sibling's."""

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


def replay(events: list[Event], out: TextIO, err: TextIO) -> None:
    """Write what Recorders kept to `out` and `err`, in the order it was written."""
    for name, text in events:
        stream = out if name == "out" else err
        if text is None:
            stream.flush()
        else:
            stream.write(text)


def _start(work: Callable[[], Any]) -> Child | None:
    """A Child, or None when no process is to be had (a limit): the work is done here."""
    try:
        return Child(work)
    except OSError:
        return None


Printing = Callable[[U, TextIO, TextIO], R]  # a unit, its stdout and stderr -> its result


def _chunk(fn: Printing[U, R], units: Sequence[U]) -> list[tuple[list[Event], R]]:
    """In a child: the units in order, each with what it printed, until one fails."""
    events: list[Event] = []
    out, err = Recorder(events, "out"), Recorder(events, "err")
    sys.stdout, sys.stderr = out, err  # what is printed without a stream is kept too
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
    """`fn(unit, out, err)` of every unit, in `processes` processes (`count()` if None),
    results in unit order; see the module docstring. `out`/`err` (sys's if None) get what
    the units print, in unit order. Within the units `count()` is 1."""
    out, err = out or sys.stdout, err or sys.stderr
    n = min(count() if processes is None else processes, len(units))
    if n < 2:
        return [fn(u, out, err) for u in units]
    cuts = [len(units) * i // n for i in range(n + 1)]
    runs = [units[a:b] for a, b in zip(cuts, cuts[1:])]
    with one_process():
        for s in (out, err):
            s.flush()
        children = [_start(lambda r=r: _chunk(fn, r)) for r in runs[1:]]
        try:
            values = [fn(u, out, err) for u in runs[0]]
            for child, run in zip(children, runs[1:]):
                done = (child and child.result()) or []
                for events, value in done:
                    replay(events, out, err)
                    values.append(value)
                values += [fn(u, out, err) for u in run[len(done):]]
            return values
        finally:
            for child in children:
                if child is not None:
                    child.cancel()
