"""vbw.parallel: units in several processes give what one process gives (results and
output in unit order, the first error raised here), a failed or stopped child only costs
time, the count comes from one setting, and a child dies with its parent."""

from __future__ import annotations

import io
import faulthandler
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

import pytest

from vbw import parallel

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.ENV, "2")


def _where(unit: int, out: TextIO, err: TextIO) -> tuple[int, int]:
    print(f"{unit} out", file=out)
    print(f"{unit} err", file=err)
    return unit * unit, os.getpid()


def test_results_and_output_come_in_unit_order() -> None:
    out, err = io.StringIO(), io.StringIO()
    got = parallel.ordered(_where, list(range(5)), 3, out, err)
    assert [v for v, _ in got] == [0, 1, 4, 9, 16]
    assert len({pid for _, pid in got}) == 3 and got[0][1] == os.getpid()
    assert out.getvalue() == "".join(f"{i} out\n" for i in range(5))
    assert err.getvalue() == "".join(f"{i} err\n" for i in range(5))


def test_one_process_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.ENV, "1")
    assert parallel.count() == 1
    got = parallel.ordered(_where, [1, 2, 3])
    assert {pid for _, pid in got} == {os.getpid()}
    monkeypatch.delenv(parallel.ENV)
    assert parallel.count() in (1, os.cpu_count())
    assert parallel.count(forkable=False) == 1


def test_units_do_not_split_again() -> None:
    counts = parallel.ordered(lambda u, *_: parallel.count(), [0, 1], 2)
    assert counts == [1, 1] and parallel.count() == 2


def _fails_in_child(parent: int, how: str):
    def fn(unit: int, out: TextIO, err: TextIO) -> int:
        print(f"{unit}", file=out)
        if unit == 2 and os.getpid() != parent:
            if how == "crash":
                os.kill(os.getpid(), signal.SIGKILL)
            if how == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            raise RuntimeError("in the child only")
        return unit
    return fn


@pytest.mark.parametrize("how", ["raise", "crash", "stop"])
def test_a_failed_child_has_its_units_run_here(how: str) -> None:
    out = io.StringIO()
    got = parallel.ordered(_fails_in_child(os.getpid(), how), [0, 1, 2, 3], 2, out)
    assert got == [0, 1, 2, 3] and out.getvalue() == "0\n1\n2\n3\n"


def test_the_first_error_in_unit_order_is_raised_here() -> None:
    def fn(unit: int, out: TextIO, err: TextIO) -> int:
        print(unit, file=out)
        if unit >= 2:
            raise ValueError(f"unit {unit}")
        return unit

    out = io.StringIO()
    with pytest.raises(ValueError, match="unit 2"):
        parallel.ordered(fn, [0, 1, 2, 3], 2, out)
    assert out.getvalue() == "0\n1\n2\n"  # unit 3's output is not shown


def test_an_error_here_stops_the_children() -> None:
    def fn(unit: int, out: TextIO, err: TextIO) -> int:
        if unit == 0:
            raise KeyboardInterrupt
        time.sleep(30)
        return unit

    before = _children()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        parallel.ordered(fn, [0, 1], 2)
    assert time.monotonic() - start < 10
    assert _children() <= before  # every child it started is gone and reaped


def _children() -> set[int]:
    """This process's children, zombies included (the full suite keeps others running, such
    as a fixture's server, so `waitpid(-1)` cannot tell)."""
    pid = os.getpid()
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(map(int, (task / "children").read_text().split()))
    return found


def test_a_message_larger_than_the_pipe_arrives_whole() -> None:
    data = os.urandom(3 << 20)
    assert parallel.Child(lambda: data).result() == data


def test_a_stopped_child_is_not_waited_for_forever() -> None:
    child = parallel.Child(lambda: os.kill(os.getpid(), signal.SIGSTOP) or 1)
    start = time.perf_counter()
    assert child.result() is None
    assert time.perf_counter() - start < 10 * parallel.POLL + 2
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped


def test_leave_runs_the_childs_own_exit_work(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    done = tmp_path / "done"
    monkeypatch.setattr(parallel, "_AT_LEAVE", [])
    parallel.at_leave(lambda: done.write_text("yes"))
    parallel.at_leave(lambda: 1 / 0)  # a failing piece is skipped
    assert parallel.Child(lambda: 7).result() == 7
    assert done.read_text() == "yes"


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_parent() -> None:
    middle = ("import os, time\n"
              "from vbw.parallel import Child\n"
              "c = Child(lambda: time.sleep(60))\n"
              "print(c.pid, flush=True)\n"
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


def test_limited_gives_results_in_unit_order_and_a_lost_for_late_or_dead_children(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.ENV, "2")

    def unit(u: float) -> float:
        if u < 0:
            os.abort()
        time.sleep(u)
        return u * 10

    start = time.monotonic()
    def quiet() -> None:  # the aborting child's fault report off the test's output
        faulthandler.disable()

    got = parallel.limited(unit, [0.05, 30.0, -1.0, 0.9, 0.1], seconds=1.0, at_start=quiet)
    assert time.monotonic() - start < 8  # the 30 s unit was killed at its limit
    assert got[0] == 0.5 and got[3] == 9.0 and got[4] == 1.0  # 0.9 s: within its 1 s
    assert got[1] == parallel.Lost(True, got[1].status)
    assert got[2] == parallel.Lost(False, got[2].status) and os.WIFSIGNALED(got[2].status)
    assert os.WTERMSIG(got[2].status) == signal.SIGABRT


def test_limited_runs_at_start_in_the_child_only() -> None:
    here = os.getpid()
    pids = parallel.limited(lambda u: (u, os.getpid()), [1, 2], seconds=10,
                            at_start=lambda: os.environ.__setitem__("VBW_TEST_CHILD", "1"))
    assert [u for u, _ in pids] == [1, 2] and all(pid != here for _, pid in pids)
    assert "VBW_TEST_CHILD" not in os.environ
