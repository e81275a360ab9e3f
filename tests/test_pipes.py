"""vbw.pipes: whole messages through a pipe, a forked child's own exit work, and a child
that dies with its parent (killing `vbw` stops the work of every process it forked)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vbw import pipes

ROOT = Path(__file__).resolve().parent.parent


def test_a_message_larger_than_the_pipe_arrives_whole() -> None:
    data = os.urandom(3 << 20)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        pipes.send_all(w, data)
        os._exit(0)
    os.close(w)
    got = pipes.receive_all(r)
    os.close(r)
    os.waitpid(pid, 0)
    assert got == data


def test_leave_runs_the_childs_own_exit_work(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    done = tmp_path / "done"
    monkeypatch.setattr(pipes, "_AT_LEAVE", [])
    pipes.at_leave(lambda: done.write_text("yes"))
    pipes.at_leave(lambda: 1 / 0)  # a failing piece is skipped
    pid = os.fork()
    if pid == 0:
        pipes.leave(7)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7
    assert done.read_text() == "yes"


def _state(pid: int) -> str | None:
    """The process's state letter (Z: a zombie, dead), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_forked_child_dies_with_its_parent() -> None:
    middle = ("import os, sys, time\n"
              "from vbw.pipes import die_with_parent\n"
              "parent = os.getpid()\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    die_with_parent(parent)\n"
              "    time.sleep(60)\n"
              "    os._exit(0)\n"
              "print(pid, flush=True)\n"
              "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    child = int(proc.stdout.readline())  # type: ignore[union-attr]
    time.sleep(0.2)
    assert _state(child) in ("S", "R")
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 5
    while _state(child) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(child) in (None, "Z")


def test_a_stopped_child_is_not_waited_for_forever() -> None:
    """Issue 30 item 15: a SIGSTOPped child sends nothing and never exits; its result is
    None within a few polls, and it is killed and reaped."""
    import signal

    pending = pipes.beside(lambda: os.kill(os.getpid(), signal.SIGSTOP) or 1)
    pid = pending._pid
    start = time.perf_counter()
    assert pending.result() is None
    assert time.perf_counter() - start < 10 * pipes.POLL + 2
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped
    assert pipes.beside(lambda: 7).result() == 7  # a child that is not stopped: its result


def test_stopped_looks_without_reaping() -> None:
    import signal

    pid = pipes.fork()
    if pid == 0:
        os.kill(os.getpid(), signal.SIGSTOP)
        os._exit(5)
    deadline = time.monotonic() + 10
    while not pipes.stopped(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pipes.stopped(pid) and pipes.stopped(pid)  # still stopped, still there
    os.kill(pid, signal.SIGCONT)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 5
    assert not pipes.stopped(pid)
