"""Tasks scored in a forked child (vbw.modes.forked) show exactly what one process shows:
the same stdout and stderr in the same order, the same exit code and the same files,
whether the child's tasks succeed, fail with an error, hit a bug or crash, and whether a
task of the parent fails while the child works."""

from __future__ import annotations

import io
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest

from tests.conftest import REPLAYS, run_vbw
from tests.same import run_outputs
from vbw.modes import forked
from vbw.modes.forked import run_tasks

TASKS = ["a", "b", "c"]  # the parent runs a and b, the child c (and b of two)


@pytest.fixture(autouse=True)
def _fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork here even if an earlier test left a thread behind (tqdm's monitor, after a
    progress bar): these tasks take no lock a thread could hold. The refusal with threads
    running is tested on its own below."""
    monkeypatch.setenv(forked.ENV, "2")
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)


def _writer(root: Path, parent: int, fail: dict[str, Callable[[], None]] | None = None):
    """A task run that prints to both streams, writes a file into its folder and returns
    a value; `fail[task]` is called mid-task in the process it names ("parent" or
    "child" suffix) to make it fail."""
    def run(task: str, out: TextIO, err: TextIO, before_write: Callable[[], None]) -> str:
        print(f"{task}: first", file=out)
        print(f"{task}: warning", file=err, flush=True)
        where = "parent" if os.getpid() == parent else "child"
        if fail and f"{task}/{where}" in fail:
            fail[f"{task}/{where}"]()
        before_write()
        (root / task).mkdir(parents=True, exist_ok=True)
        (root / task / "report.md").write_text(f"{task} report", encoding="utf-8")
        print(f"{task}: md", file=out)
        return f"{task} value"
    return run


class _Terminal(io.StringIO):
    """One of two streams that share a terminal: what both print, in the order printed."""

    def __init__(self, shared: list[str], name: str) -> None:
        super().__init__()
        self.shared, self.name = shared, name

    def write(self, s: str) -> int:
        self.shared.append(f"{self.name}:{s}")
        return super().write(s)


def _run(root: Path, fail: dict[str, Callable[[], None]] | None = None,
         tasks: list[str] = TASKS) -> tuple[list[str], str, str, dict[str, str], list[str]]:
    shared: list[str] = []
    out, err = _Terminal(shared, "out"), _Terminal(shared, "err")
    values = run_tasks(tasks, _writer(root, os.getpid(), fail), lambda t: root / t, out, err,
                       forkable=True)
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(root.rglob("*")) if p.is_file()}
    return values, out.getvalue(), err.getvalue(), files, shared


def test_the_fork_is_taken_here() -> None:
    """Every test below runs the forked path, not the sequential fall-back."""
    assert forked.wanted(2, forkable=True)
    assert not forked.wanted(1, forkable=True) and not forked.wanted(3, forkable=False)


def test_sequential_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forked.ENV, "1")
    assert not forked.wanted(2, forkable=True)


def test_sequential_while_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    monkeypatch.setenv(forked.ENV, "2")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not forked.wanted(2, forkable=True)
    finally:
        stop.set()
        other.join()


def test_same_values_output_and_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _run(tmp_path / "forked")
    monkeypatch.setenv(forked.ENV, "1")
    assert got == _run(tmp_path / "one")
    assert got[0] == ["a value", "b value", "c value"]
    assert got[1].splitlines() == ["a: first", "a: md", "b: first", "b: md", "c: first", "c: md"]
    # the child's task c: stdout and stderr interleaved as printed, after b's
    assert got[4].index("out:b: md") < got[4].index("out:c: first") \
        < got[4].index("err:c: warning") < got[4].index("out:c: md")


def test_no_process_to_be_had(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """os.fork failing (a process limit) runs the tasks in this process."""
    def refuse() -> int:
        raise OSError("fork: resource temporarily unavailable")
    expected = _run(tmp_path / "forked")
    monkeypatch.setattr(os, "fork", refuse)
    assert _run(tmp_path / "refused") == expected


def _crash() -> None:
    os._exit(7)


def _bug() -> None:
    raise RuntimeError("a bug in task c")


@pytest.mark.parametrize("fail", [_crash, _bug], ids=["crash", "bug"])
def test_a_failing_child_task_is_run_again_here(tmp_path: Path, fail: Callable[[], None]) -> None:
    """The child's failure is never shown: the parent runs the task itself, where it fails
    (a bug: the same exception) or not (the crash was the child's alone)."""
    if fail is _bug:
        with pytest.raises(RuntimeError, match="a bug in task c"):
            run_tasks(TASKS, _writer(tmp_path, os.getpid(), {"c/child": fail, "c/parent": fail}),
                      lambda t: tmp_path / t, io.StringIO(), io.StringIO(), forkable=True)
        return
    got = _run(tmp_path / "forked", {"c/child": fail})
    assert got == _run(tmp_path / "one", {}, TASKS)  # the same as with no failure at all


def test_a_failing_parent_task_removes_what_the_child_wrote(tmp_path: Path) -> None:
    """The parent's task fails once the child has written its task's folder: the error
    goes on up, and the folder a sequential run would never have made is gone."""
    def wait_then_fail() -> None:
        deadline = time.monotonic() + 10
        while not (tmp_path / "c" / "report.md").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (tmp_path / "c" / "report.md").exists()
        raise ValueError("task b is wrong")
    with pytest.raises(ValueError, match="task b is wrong"):
        _run(tmp_path, {"b/parent": wait_then_fail})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_the_child_waits_before_writing_into_an_existing_folder(tmp_path: Path) -> None:
    """An older run's folder is not touched until the parent's tasks succeeded."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "report.md").write_text("older run", encoding="utf-8")

    def fail_later() -> None:
        time.sleep(0.5)  # the child, were it not held, writes within milliseconds
        raise ValueError("task b is wrong")
    with pytest.raises(ValueError):
        _run(tmp_path, {"b/parent": fail_later})
    assert (tmp_path / "c" / "report.md").read_text(encoding="utf-8") == "older run"
    got = _run(tmp_path)  # and when the parent succeeds, it writes
    assert got[3]["c/report.md"] == "c report"


# --- the demo itself, as a user runs it: `vbw` in one process and in two ----------------

def _vbw(tmp_path: Path, processes: str, *args: str) -> tuple[int, str, str, dict[str, bytes]]:
    run_dir = tmp_path / f"run{processes}"
    proc = run_vbw(*args, f"hydra.run.dir={run_dir}", cwd=tmp_path,
                   env={forked.ENV: processes})
    files = run_outputs(run_dir)
    clean = str(run_dir)
    return (proc.returncode, proc.stdout.replace(clean, "RUN"), proc.stderr.replace(clean, "RUN"),
            files)


def _same_in_two_processes(tmp_path: Path, *args: str) -> tuple[int, str, str, dict]:
    one, two = _vbw(tmp_path, "1", *args), _vbw(tmp_path, "2", *args)
    assert two == one
    return one


def test_the_demo_with_a_tripped_gate(tmp_path: Path) -> None:
    code, out, err, files = _same_in_two_processes(tmp_path, "gate.wrong_valid_above=0.5")
    assert code == 1 and "vbw: gate tripped" in err
    assert out.index("# vbw report: bfcl_simple") < out.index("# vbw report: gsm8k") \
        < out.index("Reports written to RUN")
    assert len(files) == 10 and "gsm8k/report.html" in files


def test_an_error_in_the_second_task(tmp_path: Path) -> None:
    """gsm8k's replay (scored by the child) has a broken line: the same one line, exit 2,
    and bfcl_simple's reports, as in one process."""
    user = tmp_path / "replays"
    for task in ("bfcl_simple", "gsm8k"):
        shutil.copytree(REPLAYS / task / "qwen2_5_0_5b", user / task / "qwen2_5_0_5b")
    broken = user / "gsm8k" / "qwen2_5_0_5b" / "outlines.jsonl"
    lines = broken.read_text(encoding="utf-8").splitlines(keepends=True)
    broken.write_text("".join(lines[:5] + ["{not json\n"] + lines[5:]), encoding="utf-8")
    code, out, err, files = _same_in_two_processes(tmp_path, "mode=replay",
                                                   f"replays_dir={user}")
    assert code == 2 and len(err.splitlines()) == 1 and "outlines.jsonl" in err, err
    assert sorted(files) == sorted(f"bfcl_simple/{n}" for n in (
        "ledger.csv", "quadrants.svg", "report.html", "report.json", "report.md"))


def test_each_side_scores_its_replays_in_one_process(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the tasks on two processes, neither splits a large replay again (two tasks
    must not make four processes on two cores); alone again, a process may."""
    from vbw.score import split

    monkeypatch.delenv(forked.ENV)
    monkeypatch.setattr(forked.os, "cpu_count", lambda: 2)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * split.SPLIT_BYTES)
    assert split.wanted(big) and forked.wanted(2, forkable=True)

    def run(task: str, out: TextIO, err: TextIO, before_write: Callable[[], None]) -> bool:
        return split.wanted(big)

    assert run_tasks(["a", "b"], run, lambda t: tmp_path / t, io.StringIO(), io.StringIO(),
                     forkable=True) == [False, False]
    assert split.wanted(big)
