"""A run whose replay and task files are hostile, for report.html's escaping tests (the
string checks in test_html.py and the browser checks in test_html_browser.py).

Every string a person could plant is markup that would set `window.pwned` if it ever ran:
an item id, a question, a gold, the task's label, the header's hardware line and the
model's texts, one of them 1 MB of `</script>` with the answer at its very end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, run_vbw

PWN = "<script>window.pwned=1</script>"
EVIL_ID = f"</script>{PWN}<!--"
EVIL_LABEL = 'accuracy <img src=x onerror="window.pwned=2"> & "quoted"'
EVIL_CPU = '<svg onload="window.pwned=3"></svg> ]]> </textarea>'
EVIL_QUESTION = f"What is the capital of </textarea>{PWN}'s \"France\"? ]]>"
EVIL_TEXT = f"{PWN} </textarea> \"double\" 'single' ]]> <!-- \u2028\u2029 Answer: Paris"
BIG = 1 << 20
BIG_TEXT = "</script>" * (BIG // 9) + "\nAnswer: Tokyo"
EMOJI_TEXT = "😀😀 emoji before the answer\nAnswer: Rome"
ARMS = ["unconstrained", "prompt_json[answer]", "constrained[answer]",
        "reason_then_constrain[answer]"]


def _item(item_id: str, texts: list[str], length: str | None = None) -> dict:
    arms = {a: {"text": t} for a, t in zip(ARMS, texts)}
    if length:
        arms[length]["finish_reason"] = "length"
    return {"id": item_id, "arms": arms}


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`vbw` on the hostile task and replay; returns the run folder (report.html in it)."""
    tmp = tmp_path_factory.mktemp("hostile_html")
    (tmp / "conf/task").mkdir(parents=True)
    rows = [{"id": EVIL_ID, "question": EVIL_QUESTION, "answer": "Paris"},
            {"id": "cap_japan", "question": "What is the capital of Japan?", "answer": "Tokyo"},
            {"id": "cap_italy", "question": "What is the capital of Italy?", "answer": "Rome"}]
    (tmp / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    task = yaml.safe_load((EXAMPLE / "task/capitals.yaml").read_text("utf-8"))
    task.update(name="hostile_caps", label=EVIL_LABEL)
    task["dataset"]["path"] = str(tmp / "rows.jsonl")
    (tmp / "conf/task/hostile_caps.yaml").write_text(yaml.safe_dump(task), "utf-8")
    head = {"meta": {"format": "vbw-replay/1", "task": "hostile_caps", "arms": ARMS,
                     "hardware": {"cpu": EVIL_CPU}}}
    items = [_item(EVIL_ID, [EVIL_TEXT, '{"city": "<img src=x onerror=\\"window.pwned=4\\">"}',
                             '{"city": "Paris"}', '{"city": "</textarea>"}']),
             _item("cap_japan", [BIG_TEXT, '{"city": "Tokyo"}', '{"city": "Kyoto"}',
                                 '{"city": "Tokyo"}']),
             _item("cap_italy", [EMOJI_TEXT, '{"city": "Rome"', '{"city": "Rome"}',
                                 '{"city": "Milan"}'], length="prompt_json[answer]")]
    replay = tmp / "r.jsonl"
    replay.write_text("".join(json.dumps(x) + "\n" for x in [head, *items]), "utf-8")
    out = tmp / "out"
    proc = run_vbw("--config-dir", str(tmp / "conf"), "task=hostile_caps", f"replay={replay}",
                   f"hydra.run.dir={out}", cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
