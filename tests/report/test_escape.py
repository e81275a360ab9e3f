"""Strings from replays and task files cannot inject markup into report.md: a header with
newlines, `#`, `|` and `<script>`, hostile item ids and a hostile label stay inert text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from tests.conftest import REPLAYS, portable_task, run_vbw
from vbw.report.escape import code, text

EVIL = "AMD\n# Owned\n| a | b |\n<script>alert(1)</script> [x](http://e.x) `tick`"


def test_text_and_code_are_inert() -> None:
    t = text(EVIL)
    assert "\n" not in t and "<script>" not in t and "&lt;script&gt;" in t
    assert "\\|" in t and "\\[x\\]" in t and "\\`tick\\`" in t
    c = code("a`b|c\nd", in_table=True)
    assert c == "``a`b\\|c d``"
    assert code("`x`") == "`` `x` ``"


def _hostile_replay(tmp: Path) -> Path:
    lines = (REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    head["meta"]["hardware"]["cpu"] = EVIL
    head["meta"]["engine"] = "outlines\n## fake heading"
    head["meta"]["model"]["file"] = "m.gguf|<img src=x onerror=alert(1)>"
    head["meta"]["versions"]["vbw"] = "0.2\n\n- list"
    items = [json.loads(x) for x in lines[1:4]]
    items[1]["arms"]["constrained[answer]"]["unsupported_schema"] = "reason <b>bold</b>\n# h"
    out = tmp / "r.jsonl"
    out.write_text("\n".join(json.dumps(x) for x in [head, *items]) + "\n", encoding="utf-8")
    return out


def test_hostile_meta_and_label_do_not_inject_markup(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["label"] = "acc | <script>x</script>\n# H"
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    proc = run_vbw(f"task.files=[{tmp_path / 't.yaml'}]", f"replay={_hostile_replay(tmp_path)}",
                   "allow_task_mismatch=true", "n=3", f"hydra.run.dir={tmp_path}/o",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "o/report.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "<img" not in md and "<b>" not in md
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert headings == ["# vbw report: gsm8k (N=2, replay)",
                        "## Metrics per arm (rate over all N items, 95% bootstrap CI)",
                        "## Paired comparisons (same items)", "## What each arm cost"]
    assert not any(ln.startswith("- list") for ln in md.splitlines())
    tables: list[list[str]] = [[]]  # consecutive table rows
    for ln in md.splitlines():
        if ln.startswith("|"):
            tables[-1].append(ln)
        elif tables[-1]:
            tables.append([])
    widths = [{len(re.split(r"(?<!\\)\|", ln)) for ln in t} for t in tables if t]
    # every table row keeps its header's columns (the arms table 4, the cost table 6,
    # plus the two outer bars)
    assert widths == [{6}, {8}]
    assert "&lt;script&gt;" in md and "AMD # Owned \\| a \\| b \\|" in md


def test_task_check_findings_stay_inert(tmp_path: Path) -> None:
    """A finding quotes the task file's own strings (an item id, a gold): in report.md they
    stay one line of text, in report.html escaped text."""
    from tests.task.usertasks import ticket_task, write_replay

    task = ticket_task(tmp_path / "t", rows=2)
    data = tmp_path / "t/tickets.jsonl"
    rows = [json.loads(x) for x in data.read_text(encoding="utf-8").splitlines()]
    rows[1].update(id="<script>x</script>\n# H", category="<img src=x onerror=alert(1)>|")
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    arm = "constrained[ticket]"
    replay = write_replay(tmp_path / "r.jsonl", "tickets", [arm],
                          {r["id"]: {arm: '{"category": "billing", "amount": 1}'} for r in rows})
    proc = run_vbw(f"task.files=[{task}]", f"replay={replay}", "arms.kinds=[constrained]",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "does not validate on 1 of 2 items" in proc.stderr
    md = (tmp_path / "o/report.md").read_text(encoding="utf-8")
    assert "## Task check" in md and "does not validate on 1 of 2 items" in md
    assert "<script>" not in md and "<img" not in md and "\n# H" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;\\|" in md
    html = (tmp_path / "o/report.html").read_text(encoding="utf-8")
    section = html[html.index('id="task-check"'):html.index('id="metrics"')]
    assert "does not validate on 1 of 2 items" in section
    assert "<script>" not in section and "<img" not in section
    assert "&lt;img src=x onerror=alert(1)&gt;|" in section
