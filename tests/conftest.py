"""Shared fixtures: the repository paths and a helper that runs the real `vbw` entry point;
and the `slow` marker that splits off the fast tier (see pytest_collection_modifyitems)."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONF_ROOT = ROOT / "conf"                # the bundled config groups
TASK_CONF = CONF_ROOT / "task"           # the bundled task configs (pure task YAML)
DATA = ROOT / "tasks" / "data"           # their data
EXAMPLE = ROOT / "examples" / "qa"       # a user's config folder: task/, data/, replays/
REPLAYS = ROOT / "replays"
REFERENCE = Path(__file__).resolve().parent / "reference"


# The suite never writes to the real user cache (~/.cache/vbw: check_schema verdicts):
# XDG_CACHE_HOME points at a folder of this session, set in os.environ so that every
# `python -m vbw` subprocess inherits it; removed when the session ends.
_SESSION_CACHE = tempfile.mkdtemp(prefix="vbw-test-cache-")
os.environ["XDG_CACHE_HOME"] = _SESSION_CACHE


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


def vbw_env(env: dict | None = None, pythonpath: tuple[Path, ...] = ()) -> dict[str, str]:
    """The environment of a `python -m vbw` child: this one, with `env` on top, and
    `pythonpath` then this checkout first on PYTHONPATH, so the child runs the vbw under
    test (a test that shadows a module puts its folder in `pythonpath`)."""
    full = {**os.environ, **(env or {})}
    paths = [*map(str, pythonpath), str(ROOT), *filter(None, [full.get("PYTHONPATH")])]
    return {**full, "PYTHONPATH": os.pathsep.join(paths)}


def vbw_command(*args: str, python: str = sys.executable,
                prefix: tuple[str, ...] = ()) -> list[str]:
    """`[*prefix, python, -m, vbw, *args]`: `prefix` is a wrapper that runs the rest (such
    as a peak-memory meter)."""
    return [*prefix, python, "-m", "vbw", *args]


def run_vbw(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120,
            python: str = sys.executable, prefix: tuple[str, ...] = (),
            pythonpath: tuple[Path, ...] = (), stdout: Any = subprocess.PIPE
            ) -> subprocess.CompletedProcess:
    """`python -m vbw ARGS` in a subprocess, as a user would run it (no shell, no stdin),
    to its end; stdout and stderr are captured as text (stdout may go to a file instead)."""
    return subprocess.run(vbw_command(*args, python=python, prefix=prefix), cwd=cwd,
                          env=vbw_env(env, pythonpath), stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def start_vbw(*args: str, cwd: Path, env: dict | None = None,
              output: Any = subprocess.PIPE) -> subprocess.Popen:
    """`python -m vbw ARGS` started and left running (a test that kills it or runs two at
    once); `output` receives its stdout and stderr (pipes, as text, unless DEVNULL)."""
    return subprocess.Popen(vbw_command(*args), cwd=cwd, env=vbw_env(env), stdout=output,
                            stderr=output, text=True, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def portable_task(name: str) -> dict:
    """A bundled task's YAML as data, its data paths made absolute, so a test can change it
    and write it anywhere."""
    import yaml

    data = yaml.safe_load((TASK_CONF / f"{name}.yaml").read_text(encoding="utf-8"))
    ds = data["dataset"]
    ds["path"] = str((TASK_CONF / ds["path"]).resolve())
    if ds.get("join"):
        ds["join"]["path"] = str((TASK_CONF / ds["join"]["path"]).resolve())
    return data


def yaml_error(tmp_path: Path, text: str) -> str:
    """vbw.validation.load_yaml's refusal of `text` written as tmp_path/t.yaml: one line
    (asserted), as raised."""
    from vbw.errors import ConfigError
    from vbw.validation import load_yaml

    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_yaml(path)
    assert "\n" not in str(e.value)
    return str(e.value)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """A usage error as the contract wants it: exit 2, one stderr line, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the fast tier: `python -m pytest -q -m "not slow"` (docs/testing.md) ---------------

SLOW_MARKERS = ("live", "browser")  # the real SmolLM2 (and its server), headless Chromium
# the live fixtures of tests/generate/conftest.py: a test that asks for one loads the model
LIVE_FIXTURES = {"smollm2_file", "runtime", "engines", "backends", "llama_server"}
# a name that, referenced by a test, a test helper or a fixture, starts another process:
# `python -m vbw` runs (and through them every Hydra launcher: joblib, submitit, Ray), pip
# building the wheel, a server, a process killed on purpose
SPAWNERS = {"run_vbw", "subprocess", "multiprocessing", "Popen"}


def _names(code: CodeType) -> set[str]:
    """Global and attribute names a code object uses, nested functions and
    comprehensions included."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out |= _names(const)
    return out


def spawns(fn: Any, seen: set[CodeType] | None = None) -> bool:
    """Does `fn`, or a tests.* function it names, start another process?"""
    seen = set() if seen is None else seen
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names = _names(code)
    if names & SPAWNERS:
        return True
    scope = getattr(fn, "__globals__", {})
    return any(inspect.isfunction(f) and f.__module__.startswith("tests.") and spawns(f, seen)
               for f in (scope.get(n) for n in names))


def slow_reason(item: pytest.Item) -> str | None:
    """Why a test is left out of the fast tier, or None: it is marked live or browser,
    asks for a live fixture, or it, a helper it calls or a fixture it uses spawns a
    process."""
    for m in SLOW_MARKERS:
        if item.get_closest_marker(m) is not None:
            return m
    info = getattr(item, "_fixtureinfo", None)
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & LIVE_FIXTURES:
        return "live fixture"
    if spawns(getattr(item, "function", None)):
        return "spawns a process"
    for name in sorted(fixtures):
        defs = info.name2fixturedefs.get(name, ()) if info is not None else ()
        if any(spawns(d.func) for d in defs):
            return f"fixture {name} spawns a process"
    return None


def outside_the_package(item: pytest.Item) -> str | None:
    """The module of a test that is not under the `tests` package (a folder without
    `__init__.py`): `spawns` follows only `tests.*` helpers, so its tests could start a
    process unseen."""
    module = getattr(getattr(item, "module", None), "__name__", "tests.")
    return None if module.startswith("tests.") else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if (module := outside_the_package(item)) is not None:
            raise pytest.UsageError(f"{item.path}: module {module!r} is not under the tests "
                                    "package; give its folder an __init__.py")
        reason = slow_reason(item)
        if reason is not None:
            item.add_marker(pytest.mark.slow(reason=reason))


# A fast test that starts a program anyway (through a path the rules above do not see) fails:
# an audit hook watches every test not marked slow. Forks of this interpreter (vbw's worker
# processes, its crash guard) are no program start: cheap copies, allowed in the fast tier.
PROGRAM_STARTS = {"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.system", "os.exec"}


class ProgramGuard:
    """The audit hook: while `watching` names a test, a program start is refused (the
    call raises) and recorded in `found`, which fails the test even if the error is caught."""

    def __init__(self) -> None:
        self.watching: str | None = None
        self.found: list[str] = []

    def __call__(self, event: str, args: tuple) -> None:
        if self.watching is not None and event in PROGRAM_STARTS:
            first = args[0] if args else ""
            first = os.fsdecode(first) if isinstance(first, bytes) else str(first)
            what = f"{event} {first[:200]}"
            self.found.append(what)
            raise RuntimeError(
                f"{self.watching} is in the fast tier but starts a program ({what}): let "
                "the test, a tests.* helper or a fixture name run_vbw or subprocess, so "
                "tests/conftest.py marks it slow")


GUARD = ProgramGuard()
sys.addaudithook(GUARD)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    GUARD.watching = None if item.get_closest_marker("slow") else item.nodeid
    GUARD.found = []
    try:
        return (yield)
    finally:
        GUARD.watching = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    report = yield
    if call.when == "teardown" and GUARD.found and report.passed:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} is in the fast tier but started a program: "
                           + "; ".join(GUARD.found))
    return report
