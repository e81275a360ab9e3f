"""vbw-canned against an installed vbw: its backend runs a live job, its checker scores the
task in replay mode and passes check mode, and nothing of vbw was changed for either.

Run with the python of an environment where vbw and this package are installed
(`pip install validbutwrong ./examples/plugin`): `python -m pytest examples/plugin/tests`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TEXTS = HERE / "data" / "answers.jsonl"
TASK = ("--config-dir", str(HERE), "task=sums")
FREE_ARMS = "arms.kinds=[unconstrained,prompt_json]"


def vbw(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "vbw", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("live") / "run"
    proc = vbw(*TASK, "mode=live", "backend=canned", f"backend.texts={TEXTS}", FREE_ARMS,
               f"hydra.run.dir={out}", cwd=out.parent)
    assert proc.returncode == 0, proc.stderr
    assert "engine canned, no canary" in proc.stderr
    return out


def test_the_canned_backend_runs_a_live_job(live: Path) -> None:
    meta = json.loads((live / "replay.jsonl").read_text().splitlines()[0])["meta"]
    assert meta["engine"] == "canned" and meta["arms"] == ["unconstrained", "prompt_json[answer]"]
    assert meta["model"]["file"] == "answers.jsonl" and len(meta["model"]["sha256"]) == 64
    assert meta["versions"]["vbw-canned"] == "0.1.0"  # the kind's `requires`, recorded
    assert "llama-cpp-python" not in meta["versions"]  # the local backend's, not used here
    from vbw.replay import CompleteHeader

    header = CompleteHeader.model_validate(meta)  # every field a live run records
    assert header.backend is None and header.kv_reuse is False  # in this process
    texts = [json.loads(line)["arms"]["unconstrained"]["text"]
             for line in (live / "replay.jsonl").read_text().splitlines()[1:4]]
    assert texts == ["Ten plus five. Answer: 15.3", "Answer: 30", "Answer: 10"]


def test_the_relative_checker_scores_the_task_in_replay_mode(live: Path, tmp_path: Path) -> None:
    proc = vbw(*TASK, "mode=replay", f"replay={live / 'replay.jsonl'}", FREE_ARMS,
               f"hydra.run.dir={tmp_path}/r", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    arms = json.loads((tmp_path / "r/report.json").read_text())["arms"]
    # 15.3 is within 5% of 15 and 10 is 10: right; 30 for 21 is wrong
    assert arms["unconstrained"]["answer_accuracy"]["rate"] == pytest.approx(2 / 3, abs=1e-3)
    # {"value": 15.3} and {"value": 21} right; "Answer: 10" is no JSON
    assert arms["prompt_json[answer]"]["answer_accuracy"]["rate"] == pytest.approx(2 / 3, abs=1e-3)


def test_check_mode_knows_the_plugin_checker(tmp_path: Path) -> None:
    proc = vbw(*TASK, "mode=check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sums: 3 items" in proc.stdout


def test_constrained_arms_are_refused_in_one_line(tmp_path: Path) -> None:
    proc = vbw(*TASK, "mode=live", "backend=canned", f"backend.texts={TEXTS}",
               f"hydra.run.dir={tmp_path}/x", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == ("vbw: error: backend 'canned' cannot constrain to a schema, so it "
                         "cannot run constrained[answer], reason_then_constrain[answer]; "
                         "select arms without them, e.g. arms.kinds=[unconstrained,prompt_json]")


def test_a_missing_texts_file_is_one_line(tmp_path: Path) -> None:
    proc = vbw(*TASK, "mode=live", "backend=canned", f"backend.texts={tmp_path}/none.jsonl",
               FREE_ARMS, f"hydra.run.dir={tmp_path}/x", cwd=tmp_path)
    assert proc.returncode == 2
    assert "backend.texts: cannot read" in proc.stderr and "Traceback" not in proc.stderr


def test_relative_checker() -> None:
    from vbw.task.check import CHECKERS

    checker = CHECKERS.get("relative").model_validate({"kind": "relative", "within": 0.05})
    assert checker.check(15.3, 15) and not checker.check(16, 15)
    assert checker.check(0, 0) and not checker.check(0.1, 0)
    assert not checker.check(True, 1) and not checker.check("15", 15)
    assert checker.gold_answers(15) == [15]
