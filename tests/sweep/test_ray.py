"""A sweep on a local Ray instance through hydra-ray-launcher (the optional [ray] extra).

hydra-ray-launcher 1.2.2 pins cloudpickle 2.2.1 while joblib 1.6 (the joblib launcher's)
asks for cloudpickle >= 3, so Ray lives in its own virtualenv: CI builds one
(`pip install -e '.[ray]'`) and names its interpreter in VBW_RAY_PYTHON, and the sweep runs
`vbw` with it. Without it (and without Ray here) the test is skipped, saying why, except
in CI, where a missing Ray environment is a failure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import load_json, run_vbw

HERE = (importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is not None
        and importlib.util.find_spec("ray") is not None)
RAY_PYTHON = os.environ.get("VBW_RAY_PYTHON") or (sys.executable if HERE else None)
if RAY_PYTHON is None and os.environ.get("CI"):
    raise RuntimeError("CI: VBW_RAY_PYTHON must name the Ray virtualenv's python (.ci/run)")
pytestmark = pytest.mark.skipif(
    RAY_PYTHON is None, reason="no Ray environment: pip install -e '.[ray]' in its own "
    "virtualenv and set VBW_RAY_PYTHON to its python")


def run_ray_vbw(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """vbw run by the Ray virtualenv's python (this checkout first on its path)."""
    assert RAY_PYTHON is not None
    return run_vbw(*args, cwd=cwd, timeout=timeout, python=RAY_PYTHON)


def test_sweep_on_a_local_ray_instance(tmp_path: Path) -> None:
    proc = run_ray_vbw("-m", "hydra/launcher=ray", "task=gsm8k,bfcl_simple", "n=5",
                   "gate.wrong_valid_above=0.5", f"hydra.sweep.dir={tmp_path}/s",
                   cwd=tmp_path, timeout=600)
    summary = load_json(tmp_path / "s/summary.json")
    codes = {r["task"]: r["exit_code"] for r in summary["rows"]}
    tripped = {t for t in codes if any(
        k.startswith("constrained[") and a["wrong_but_valid"]["rate"] > 0.5
        for k, a in load_json(tmp_path / f"s/{0 if t == 'gsm8k' else 1}/report.json")["arms"].items())}
    assert {t for t, c in codes.items() if c == 1} == tripped
    assert proc.returncode == summary["exit_code"] == (1 if tripped else 0), proc.stderr[-2000:]
