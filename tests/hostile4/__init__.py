"""Hostile input, round 4: one case per way in, run end to end as a user runs vbw.

Each module of this package holds `CASES`, a list of `Case`: what the run is given (files
written into a fresh folder, a server started for it, the command line) and what it must
do: exit with `rc` (2: a usage or input error) in at most `seconds`, with exactly one line
on stderr and no traceback, and nothing secret in any file it writes or prints.
`tests/test_hostile4.py` runs every case as a test; `python -m tests.benchmarks.bench_hostile
round4` runs them all and records exit code, seconds and peak memory per case.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# make(folder, stack) writes what the run needs into `folder`, starts what it needs on
# `stack` (closed after the run), and returns vbw's arguments (after `python -m vbw`).
Make = Callable[[Path, contextlib.ExitStack], list[str]]


@dataclass(frozen=True)
class Case:
    """One hostile input and the outcome the contract wants for it."""

    cls: str                 # the class of the list, e.g. "2 nesting depth"
    name: str                # what this case feeds in
    make: Make
    rc: int = 2
    seconds: float = 30.0    # the time bound, end to end (start-up included)
    rss_mb: float = 1024.0   # the memory bound: the run's peak RSS
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # strings that must appear in no output nor written file
    lines: int = 1           # stderr lines wanted (1: one error line; 0: none)

    @property
    def id(self) -> str:
        return f"{self.cls}: {self.name}"


@dataclass(frozen=True)
class Outcome:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mb: float
    written: dict[str, bytes]  # every file under the run's folder afterwards


def all_cases() -> list[Case]:
    """Every module's CASES, in module order."""
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        cases.extend(importlib.import_module(f"{__name__}.{info.name}").CASES)
    return cases


def run(case: Case, folder: Path, timeout: float | None = None) -> Outcome:
    """Run the case's `python -m vbw` in `folder` (killed after 2x its bound)."""
    with contextlib.ExitStack() as stack:
        args = case.make(folder, stack)
        env = {**os.environ, **case.env}
        start = time.perf_counter()
        parent_kib = _hwm_kib()
        proc = _Measured([sys.executable, "-m", "vbw", *args], cwd=folder, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=timeout or 2 * case.seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        seconds = time.perf_counter() - start
    # a child's ru_maxrss starts at the parent's peak RSS (exec records the high-water mark
    # of the memory it replaces, the parent's when started by vfork): a peak not above it
    # says only "at most the parent's", so it is not a figure
    peak = _peak_rss_mb(proc)
    if peak * 1024 <= parent_kib * 1.02:
        peak = float("nan")
    written = {str(p.relative_to(folder)): p.read_bytes()
               for p in sorted(folder.rglob("*")) if p.is_file()}
    return Outcome(proc.returncode, out.decode("utf-8", "replace"),
                   err.decode("utf-8", "replace"), seconds, peak, written)


class _Measured(subprocess.Popen):
    """Popen that reaps its child with wait4, keeping the child's own rusage."""

    vbw_rusage = None

    def _try_wait(self, wait_flags):  # type: ignore[no-untyped-def]
        try:
            pid, status, rusage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            pid, status = self.pid, 0
        else:
            if pid == self.pid:
                self.vbw_rusage = rusage
        return pid, status


def _hwm_kib() -> int:
    """This process's peak RSS: what a child started by vfork and exec (Python's subprocess
    where it can) reads as its own ru_maxrss at the start."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))


def _peak_rss_mb(proc: _Measured) -> float:
    rusage = proc.vbw_rusage
    return rusage.ru_maxrss / 1024 if rusage is not None else float("nan")


def check(case: Case, got: Outcome) -> None:
    """Assert the contract: exit code, stderr lines, no traceback, the time bound, no
    secret anywhere."""
    detail = (got.rc, got.stdout[-1500:], got.stderr[-1500:])
    assert got.rc == case.rc, detail
    assert "Traceback" not in got.stderr, detail
    lines = got.stderr.strip().splitlines()
    assert len(lines) == case.lines, detail
    assert got.seconds <= case.seconds, (got.seconds, case.seconds)
    # nan: not measurable beside a large parent (a test run); the benchmark measures it
    assert not got.peak_rss_mb > case.rss_mb, (got.peak_rss_mb, case.rss_mb)
    for secret in case.secrets:
        assert secret not in got.stdout and secret not in got.stderr, secret
        for name, data in got.written.items():
            assert secret.encode() not in data, (secret, name)
