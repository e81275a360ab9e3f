"""How the launching process learns a sweep's exit code: from the summary.json the sweep
wrote, never from state kept in a module.

Hydra runs the end of a multirun (vbw.cli.sweep_end) inside `@hydra.main`, which
returns nothing to its caller, and the sweep folder's name is only known once Hydra has
composed it (it holds the time). So `vbw` (vbw.cli.command) passes down where to say it: the
environment variable SWEEP_DIR_FILE names an empty file, into which the callback writes
the sweep folder's path after summary.json is complete; vbw.cli.command then reads that folder's
summary.json. The file is the process's own temporary file, removed when the run ends.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

SUMMARY = "summary.json"  # the sweep summary's manifest: holds the exit code
SWEEP_DIR_FILE = "VBW_SWEEP_DIR_FILE"


def read_exit_code(sweep_dir: Path) -> int:
    """The exit code the sweep recorded in its summary.json."""
    return int(json.loads((sweep_dir / SUMMARY).read_text(encoding="utf-8"))["exit_code"])


def tell_launcher(sweep_dir: Path) -> None:
    """Called by the sweep's end once summary.json is written: say where it is, if the
    process was started by `vbw` (vbw.cli.command) to be told."""
    target = os.environ.get(SWEEP_DIR_FILE)
    if target:
        Path(target).write_text(str(sweep_dir.resolve()), encoding="utf-8")


@contextmanager
def sweep_dir_told() -> Iterator[Callable[[], Path | None]]:
    """Within the block, a sweep that ends in this process tells where it wrote its summary;
    the function yielded returns that folder (None: no sweep ended)."""
    fd, name = tempfile.mkstemp(prefix="vbw-sweep-", suffix=".path")
    os.close(fd)
    before = os.environ.get(SWEEP_DIR_FILE)
    os.environ[SWEEP_DIR_FILE] = name

    def told() -> Path | None:
        text = Path(name).read_text(encoding="utf-8")
        return Path(text) if text else None

    try:
        yield told
    finally:
        if before is None:
            os.environ.pop(SWEEP_DIR_FILE, None)
        else:
            os.environ[SWEEP_DIR_FILE] = before
        Path(name).unlink(missing_ok=True)
