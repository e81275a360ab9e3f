"""The built wheel carries conf/, tasks/, replays/ and the published formats: installed into
a fresh venv, `vbw` works from any directory, not only from an editable checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.venvs import child_venv


def _installed_env() -> dict[str, str]:
    """The environment without PYTHONPATH, which would put a checkout's vbw before the wheel's."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp.glob("validbutwrong-0.2.0-*.whl"))
    env = tmp / "venv"
    # the running interpreter's packages supply the dependencies offline; the wheel itself
    # goes into the venv's own site-packages, which comes first on sys.path
    python = child_venv(env)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return env


def test_wheel_contents(venv: Path) -> None:
    out = subprocess.run([str(venv / "bin/python"), "-c",
                          "import vbw, vbw.resources as r; print(vbw.__file__); "
                          "print(r.bundled('conf')); print(r.bundled('replays'))"],
                         capture_output=True, text=True, check=True, cwd="/",
                         env=_installed_env()).stdout.split()
    assert str(venv) in out[0], "vbw was imported from outside the venv"
    assert out[1].startswith(str(venv)) and out[1].endswith("_bundled/conf")
    assert (Path(out[2]) / "gsm8k/qwen2_5_0_5b/outlines.jsonl").is_file()


def test_wheel_ships_the_published_formats(venv: Path) -> None:
    code = ("import vbw.formats as f; print(f.HERE); "
            "print(all(f.published(n) == f.FORMATS[n]() for n in f.FORMATS))")
    out = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True,
                         text=True, check=True, cwd="/", env=_installed_env()).stdout.split()
    assert out[0].startswith(str(venv)) and out[1] == "True"


def test_installed_vbw_scores_from_any_directory(venv: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(venv / "bin/vbw"), "task=gsm8k", f"hydra.run.dir={tmp_path}/o"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=_installed_env())
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "o/report.json").read_text())
    assert rep["n"] == 200
    assert rep["arms"]["constrained[answer]"]["answer_accuracy"]["rate"] == 0.055
    html = (tmp_path / "o/report.html").read_text()  # its template, CSS and script ship too
    assert "vbw-data" in html and "function shortArm" in html and "--ok:" in html


def _vbw(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin/vbw"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=_installed_env())


def test_installed_vbw_runs_a_user_task_folder_by_name(venv: Path, tmp_path: Path) -> None:
    """`pip install .`, then a task folder outside the package (examples/qa) by name:
    replay mode, check mode, and a sweep beside a bundled task."""
    example = ROOT / "examples/qa"
    by_name = ("--config-dir", str(example), "task=capitals", "model=smollm2_135m")
    replay = _vbw(venv, *by_name, f"replays_dir={example / 'recorded'}",
                  f"hydra.run.dir={tmp_path}/r", cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert json.loads((tmp_path / "r/report.json").read_text())["n"] == 12
    check = _vbw(venv, *by_name, "mode=check", cwd=tmp_path)
    assert check.returncode == 0 and "capitals: 12 items" in check.stdout, check.stderr
    sweep = _vbw(venv, "-m", "--config-dir", str(example), "task=capitals,bfcl_simple",
                 "model=smollm2_135m", f"replays_dir={example / 'recorded'}",
                 f"hydra.sweep.dir={tmp_path}/s", cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    tasks = sorted(json.loads(p.read_text())["task"] for p in (tmp_path / "s").glob("*/report.json"))
    assert tasks == ["bfcl_simple", "capitals"]


@pytest.mark.live
def test_installed_vbw_runs_a_user_task_live(venv: Path, tmp_path: Path) -> None:
    """The same folder, live on SmolLM2 for 3 items, from the installed wheel (the live
    extra comes from the running interpreter's packages, which the venv sees)."""
    pytest.importorskip("llama_cpp")
    from tests.generate.conftest import THREADS

    threads = [f"threads={THREADS}"] if THREADS else []
    proc = _vbw(venv, "--config-dir", str(ROOT / "examples/qa"), "task=capitals",
                "model=smollm2_135m", "mode=live", "n=3", *threads,
                f"hydra.run.dir={tmp_path}/live", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "live/report.json").read_text())
    assert rep["mode"] == "live" and rep["n"] == 3 and rep["task"] == "capitals"
