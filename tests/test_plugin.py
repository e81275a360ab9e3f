"""examples/plugin installs beside vbw in a fresh virtualenv and its own tests pass: its
backend runs a live job, its checker scores a task and its server dialect runs a live job
against a scripted server, through entry points alone (no file of vbw names any of them)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.venvs import child_venv

PLUGIN = ROOT / "examples" / "plugin"


def test_the_example_plugin_passes_its_tests_against_an_installed_vbw(tmp_path: Path) -> None:
    # the running interpreter's packages supply the dependencies offline; vbw (from this
    # checkout, not editable) and the plugin go into the venv's own site-packages, first
    python = str(child_venv(tmp_path / "venv"))
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(ROOT), str(PLUGIN)],
                   check=True, capture_output=True, timeout=600)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(PLUGIN / "tests")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"^7 passed", proc.stdout, re.MULTILINE), proc.stdout[-500:]


def test_no_file_of_vbw_names_the_plugin_kinds() -> None:
    for path in (ROOT / "vbw").rglob("*"):
        if path.suffix in (".py", ".yaml", ".json"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"\bcanned\b|vbw.canned|Literal\[\"relative\"\]|vllm_guided",
                                 text), path
