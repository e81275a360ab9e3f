"""Shared fixtures: the repository paths and a helper that runs the real `vbw` entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONF_ROOT = ROOT / "conf"                # the bundled config groups
TASK_CONF = CONF_ROOT / "task"           # the bundled task configs (pure task YAML)
DATA = ROOT / "tasks" / "data"           # their data
EXAMPLE = ROOT / "examples" / "qa"       # a user's config folder: task/, data/, replays/
REPLAYS = ROOT / "replays"
REFERENCE = Path(__file__).resolve().parent / "reference"


def run_vbw(*args: str, cwd: Path, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m vbw ARGS` in a subprocess, as a user would run it (no shell)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "vbw", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


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


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """A usage error as the contract wants it: exit 2, one stderr line, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
