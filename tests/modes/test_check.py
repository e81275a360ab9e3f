"""mode=check (vbw.modes.check) prints the header line a replay made elsewhere carries:
the task's generation hash and the arm keys of the arms selected, so that a hand-written
replay can be verified against the task."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.conftest import REPLAYS, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.report.provenance import NO_TASK_HASH
from vbw.task.runner import load_task

KINDS = ["unconstrained", "prompt_json", "constrained", "reason_then_constrain"]


def _run(mode: str, tmp_path: Path, kinds: list[str], **more) -> tuple[int, str, str]:
    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m"}, "engine": {"name": "outlines"},
        "arms": {"name": "x", "kinds": kinds, "max_tokens": {"free": 1, "json": 1,
                                                              "package": 1}},
        "mode": mode, "outputs": ["json"], **more})
    out, err = io.StringIO(), io.StringIO()
    code = run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp_path / mode, tmp_path, out, err)
    return code, out.getvalue(), err.getvalue()


def _header(printed: str) -> dict:
    lines = printed.splitlines()
    return json.loads(lines[lines.index("## Replay header") + 5])


def test_check_prints_the_task_hash_and_the_selected_arm_keys(tmp_path: Path) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    code, out, _ = _run("check", tmp_path, KINDS, n=2)
    assert code == 0
    meta = _header(out)["meta"]
    assert meta == {"format": "vbw-replay/1", "task": "gsm8k",
                    "task_hash": task.generation_hash(),
                    "arms": ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                             "prompt_json[reasoning]", "constrained[reasoning]",
                             "reason_then_constrain[answer]"]}
    _, out, _ = _run("check", tmp_path, ["constrained"], n=2)
    assert _header(out)["meta"]["arms"] == ["constrained[answer]", "constrained[reasoning]"]


def test_a_replay_carrying_the_printed_header_is_verified(tmp_path: Path) -> None:
    """Texts under the printed line score with the task hash verified (no 'not recorded'
    clause), the texts of the bundled replay's first three items."""
    _, out, _ = _run("check", tmp_path, KINDS, n=2)
    head = _header(out)
    lines = (REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl").read_text(encoding="utf-8")
    items = [json.loads(x) for x in lines.splitlines()[1:4]]
    replay = tmp_path / "mine.jsonl"
    replay.write_text("\n".join([json.dumps(head)] + [json.dumps(
        {"id": it["id"], "arms": {k: {"text": a["text"]} for k, a in it["arms"].items()}})
        for it in items]) + "\n", encoding="utf-8")
    code, _, err = _run("replay", tmp_path, KINDS, replay=str(replay), n=3)
    rep = json.loads((tmp_path / "replay/report.json").read_text(encoding="utf-8"))
    assert code == 0 and err == "", err
    assert NO_TASK_HASH not in rep["provenance"] and rep["task_mismatch"] is None
    assert rep["n"] == 3
