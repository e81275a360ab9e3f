"""The fast tier's split (tests/conftest.py): what makes a test `slow` is found, through
helpers and fixtures, and a test that does none of it stays in the fast tier."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tests import test_wheel
from tests.cli import test_command as test_cli
from tests.conftest import GUARD, ROOT, ProgramGuard, outside_the_package, slow_reason, spawns


def _starts_python() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def _calls_a_helper_that_starts_python() -> None:
    _starts_python()


def _pure() -> int:
    return sum(x * x for x in range(3))


def _fixture_that_runs_vbw() -> None:
    def inner() -> None:
        test_cli.run_vbw("--help", cwd=test_cli.ROOT)
    inner()


@pytest.mark.parametrize("fn,expected", [
    (_starts_python, True),
    (_calls_a_helper_that_starts_python, True),
    (_fixture_that_runs_vbw, True),  # a nested function
    (test_cli.test_gate_trips_with_exit_1, True),  # run_vbw: the CLI in a subprocess
    (test_wheel._vbw, True),  # the installed wheel's console script
    (_pure, False),
])
def test_spawns_follows_helpers_and_nested_functions(fn: Any, expected: bool) -> None:
    """(Its body names no spawning function, so this test itself stays in the fast tier.)"""
    assert spawns(fn) is expected


class _Item(SimpleNamespace):
    """What slow_reason reads of a pytest item."""

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.markers else None


def _item(function: Any, markers: tuple[str, ...] = (),
          fixtures: dict[str, Any] | None = None) -> _Item:
    fixtures = fixtures or {}
    defs = {name: (SimpleNamespace(func=f),) for name, f in fixtures.items()}
    return _Item(function=function, markers=markers, fixturenames=list(fixtures),
                 _fixtureinfo=SimpleNamespace(name2fixturedefs=defs))


@pytest.mark.parametrize("item,reason", [
    (_item(_pure, markers=("live",)), "live"),
    (_item(_pure, markers=("browser",)), "browser"),
    (_item(_pure, fixtures={"llama_server": _pure}), "live fixture"),
    (_item(_calls_a_helper_that_starts_python), "spawns a process"),
    (_item(_pure, fixtures={"tmp_path": _pure, "demo": _fixture_that_runs_vbw}),
     "fixture demo spawns a process"),
    (_item(_pure, fixtures={"tmp_path": _pure}), None),
])
def test_slow_reason(item: _Item, reason: str | None) -> None:
    assert slow_reason(item) == reason  # type: ignore[arg-type]


def test_every_test_module_is_in_the_tests_package() -> None:
    """A test folder without __init__.py is refused at collection: its modules would be
    top-level (`test_x`, not `tests.generate.test_x`), and `spawns` would not follow their
    helpers (so 10 tests that run `python -m vbw` sat in the fast tier)."""
    assert outside_the_package(SimpleNamespace(module=ModuleType("tests.generate.test_x"))) is None
    assert outside_the_package(SimpleNamespace(module=ModuleType("test_x"))) == "test_x"
    folders = {p.parent for p in (ROOT / "tests").rglob("*.py")
               if p.name.startswith("test_") or p.name == "conftest.py"}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, f"test folders without __init__.py: {missing}"


def test_the_guard_refuses_and_records_a_program_start() -> None:
    guard = ProgramGuard()
    guard("subprocess.Popen", ("echo",))  # not watching: nothing happens
    guard.watching = "tests/x.py::test_y"
    guard("os.fork", ())  # a fork of this interpreter is allowed
    with pytest.raises(RuntimeError, match=r"tests/x.py::test_y is in the fast tier but starts "
                                           r"a program \(os.system echo hi\)"):
        guard("os.system", ("echo hi",))
    assert guard.found == ["os.system echo hi"]


def test_this_fast_test_is_refused_a_program() -> None:
    """The installed guard, end to end: this test is fast (it names no spawner), so
    starting a program from it raises before the program runs."""
    import os

    assert GUARD.watching is not None and GUARD.watching.endswith(
        "test_this_fast_test_is_refused_a_program")
    with pytest.raises(RuntimeError, match="is in the fast tier but starts a program"):
        os.system("true")
    assert GUARD.found == ["os.system true"]
    GUARD.found.clear()  # refused as it should be: not this test's failure
