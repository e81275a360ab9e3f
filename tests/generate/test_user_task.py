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


FAST = ["model=smollm2_135m", "n=2", "progress=off", "arms.max_tokens.free=24",
        "arms.max_tokens.json=24", "arms.max_tokens.package=24",
        *([f"threads={THREADS}"] if THREADS else [])]


def test_answer_schema_with_other_required_fields_runs_live(smollm2_file,
                                                              tmp_path: Path) -> None:
    """The ticket task ({category: enum, amount: number}, both required, scored on
    category) that mode=check used to refuse, so live refused too: it passes the check and
    every constrained answer holds both properties."""
    from tests.task.usertasks import ticket_task

    task = ticket_task(tmp_path / "t")
    proc = run_vbw(f"task.files=[{task}]", "mode=live", "engine=llguidance", *FAST,
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "vbw: warning" not in proc.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["mode"] == "live" and rep["n"] == 2 and rep["excluded"]["n"] == 0
    assert rep["task_check"]["gold_checked"] == 2 and rep["task_check"]["findings"] == []
    lines = [json.loads(x) for x in (tmp_path / "o/replay.jsonl").read_text().splitlines()]
    for rec in lines[1:-1]:
        arm = rec["arms"]["constrained[ticket]"]
        if arm["finish_reason"] == "stop":
            assert set(json.loads(arm["text"])) == {"category", "amount"}


def test_nothing_scorable_names_the_engines_reason(smollm2_file, tmp_path: Path) -> None:
    """A schema the engine refuses (an unknown `format`: valid JSON Schema, satisfiable)
    leaves nothing to score; the one-line error gives llguidance's reason for the first
    item, not only counts."""
    from tests.task.usertasks import TICKET_SCHEMA, ticket_task

    schema = json.loads(json.dumps(TICKET_SCHEMA))
    schema["properties"]["category"] = {"type": "string", "format": "no-such-format-x"}
    task = ticket_task(tmp_path / "t", schema)
    proc = run_vbw(f"task.files=[{task}]", "mode=live", "engine=llguidance", *FAST,
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=600)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]  # after the live run's start line
    assert line.startswith("vbw: error: ")
    assert "no item of task tickets can be scored (held: 2, excluded: 2): every held item " \
           "is excluded, e.g. t0: " in line
    assert "engine llguidance cannot compile the schema: Unknown format: no-such-format-x" \
        in line
