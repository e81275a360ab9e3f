"""Shared fixtures: the repository paths and a helper that runs the real `vbw` entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"
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


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
