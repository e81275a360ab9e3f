"""Whole messages over a pipe between a process and the one it forked, and how the forked
one leaves.

vbw forks for speed in four places (vbw.warm's worker, vbw.modes.forked's second half of
the tasks, vbw.score.split's second half of the items, vbw.report.pagedata's report.html
items), and each sends one pickled result back (the last two through `beside`) and reads
it until the writer closes its end, which happens however the writer exits: so a crashed
child cannot leave its parent waiting. A child leaves with os._exit (`leave`): the atexit
handlers it inherited are its parent's, and its parent runs them.
What the child itself must do on its way out (the schema verdicts it learned,
vbw.task.schemacache) is registered with `at_leave`, and runs then. A child is forked by
`fork`, which makes it die with its parent (`die_with_parent`): killing `vbw` stops its
work, as it does in one process; `stop` kills and reaps one no longer wanted. What a
child prints can be kept (`Recorder`) and shown by its parent in order (`replay`). Kept
free of vbw's imports, since vbw.warm's caller uses it before the scoring stack is
loaded."""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

Event = tuple[str, str | None]  # ("out" or "err", the text written; None: a flush)

_AT_LEAVE: list[Callable[[], None]] = []


def at_leave(fn: Callable[[], None]) -> None:
    """Run `fn` when a forked child leaves (see `leave`); a normal exit is atexit's."""
    _AT_LEAVE.append(fn)


def leave(code: int) -> NoReturn:
    """End a forked child: its own exit work (`at_leave`), then os._exit, so no handler or
    buffer of its parent's runs twice. A failing piece of exit work is skipped."""
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


def receive_all(fd: int) -> bytes:
    """Read a pipe until its writer closes it (however the writer exits)."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


POLL = 0.2  # seconds between looks at a child that sends nothing


def stopped(pid: int) -> bool:
    """Whether forked child `pid` is stopped now (SIGSTOP, SIGTSTP, ...): it sends nothing
    until something continues it. Its state is only looked at (WNOWAIT), never reaped;
    where os.waitid does not exist (macOS) a stopped child is not noticed."""
    if not hasattr(os, "waitid"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG | os.WNOWAIT) is not None
    except OSError:  # not a child of this process (any more)
        return False


def receive_from(fd: int, pid: int) -> bytes | None:
    """`receive_all` from child `pid`'s pipe, or None as soon as the child is found stopped
    while it sends nothing (a stopped child would keep the reader waiting forever)."""
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], POLL)
        if not ready:
            if stopped(pid):
                return None
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed when `parent` dies (Linux's PR_SET_PDEATHSIG; elsewhere
    the child finishes its work, its result unread), and leave now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)


def fork() -> int:
    """os.fork, the child made to die with this process (`die_with_parent`)."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent)
    return pid


def stop(pid: int) -> None:
    """Kill a forked child and reap it; one already gone (or reaped) is left as it is."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class Pending:
    """What a child forked by `beside` works out: `result()` waits for it, `cancel()` stops
    the child if it is still wanted by nobody. Either reaps the child."""

    def __init__(self, pid: int, fd: int) -> None:
        self._pid, self._fd = pid, fd

    def result(self) -> Any | None:
        """The child's result; None if it raised, was killed, was found stopped (it is
        killed then) or failed in any other way."""
        if self._fd < 0:
            return None
        try:
            data = receive_from(self._fd, self._pid)
            if data is None:
                stop(self._pid)
                return None
            _, status = os.waitpid(self._pid, 0)
        finally:
            self._close()
        return pickle.loads(data) if os.waitstatus_to_exitcode(status) == 0 and data else None

    def stopped(self) -> bool:
        """Whether the child is stopped now (see `stopped`)."""
        return self._fd >= 0 and stopped(self._pid)

    def fileno(self) -> int:
        """The pipe the result comes by: readable once the child sends it or is gone."""
        return self._fd

    def cancel(self) -> None:
        """Stop the child (kill and reap it), if its result was not taken."""
        if self._fd >= 0:
            self._close()
            stop(self._pid)

    def _close(self) -> None:
        os.close(self._fd)
        self._fd = -1


def beside(work: Callable[[], Any]) -> Pending:
    """Run `work` in a forked child (see `fork`) while this process goes on; its result
    (which must pickle) comes back whole through a pipe when asked for (Pending.result).
    Any exception in the child makes it leave non-zero, and the result None."""
    read, write = os.pipe()
    pid = fork()
    if pid == 0:
        os.close(read)
        status = 1
        try:
            send_all(write, pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        except BaseException:  # noqa: BLE001  (the parent does this work itself)
            pass
        finally:
            leave(status)  # no atexit handlers, no buffers flushed: the parent owns those
    os.close(write)
    return Pending(pid, read)


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
