"""The lines vbw spends on several processes stay counted and bounded, and every OS process
call (fork, pipe, shared memory, wait, kill) stays in the one parallel layer
(docs/generate/forklines.py)."""

from __future__ import annotations

from pathlib import Path

from docs.generate import forklines


def test_the_count_stays_within_its_target_and_ceiling() -> None:
    got = forklines.counts()
    assert set(got) == {*forklines.MODULES, "modes/scoring.py:_run_tasks",
                        "modes/merge/write.py:_read_shards",
                        "generate/conformance/run.py:check_cases"}
    assert all(n > 0 for n in got.values())
    assert forklines.users(got) <= forklines.TARGET, got
    assert sum(got.values()) <= forklines.CEILING, got


def test_the_users_are_everything_but_the_layer() -> None:
    assert forklines.users({forklines.LAYER: 300, "a.py": 120, "b.py:f": 7}) == 127


def test_no_process_call_outside_the_parallel_layer() -> None:
    assert forklines.forks_outside() == []


def test_the_scan_finds_a_fork_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "parallel.py").write_text("os.fork()\n")
    (tmp_path / "sub" / "parallel.py").write_text("x = 1\nr, w = os.pipe()\n")
    (tmp_path / "sub" / "m.py").write_text("import mmap\n")
    assert forklines.forks_outside(tmp_path) == ["sub/m.py:1", "sub/parallel.py:2"]


def test_a_function_span_is_its_def_to_its_last_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n\n\ndef f(a):\n    '''doc'''\n    return a\n")
    assert forklines._span(tmp_path / "m.py", "f") == 3
