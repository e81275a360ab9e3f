"""A user's own task, YAML only, in a folder outside the package (examples/qa), run by
name: live on SmolLM2 for 3 items, then re-scored from the replay it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, load_json, run_vbw
from tests.generate.conftest import THREADS

pytestmark = pytest.mark.live


def test_user_task_live_by_name_then_rescored(smollm2_file, tmp_path: Path) -> None:
    threads = [f"threads={THREADS}"] if THREADS else []
    live = run_vbw("--config-dir", str(EXAMPLE), "task=capitals", "model=smollm2_135m",
                   "mode=live", "n=3", *threads, f"hydra.run.dir={tmp_path}/live",
                   cwd=tmp_path, timeout=600)
    assert live.returncode == 0, live.stderr
    replay = tmp_path / "live/replay.jsonl"
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["meta"]["task"] == "capitals" and "end" in lines[-1]
    assert lines[0]["meta"]["hardware"]["gpu_layers"] == 0  # model.gpu_layers, recorded
    assert [r["id"] for r in lines[1:-1]] == ["cap_france", "cap_japan", "cap_italy"]
    rep = load_json(tmp_path / "live/report.json")
    assert rep["mode"] == "live" and rep["n"] == 3 and rep["n_task"] == 3
    again = run_vbw("--config-dir", str(EXAMPLE), "task=capitals", f"replay={replay}", "n=3",
                    f"hydra.run.dir={tmp_path}/again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    rescored = load_json(tmp_path / "again/report.json")
    assert rescored["arms"] == rep["arms"] and rescored["ledger"] == rep["ledger"]
