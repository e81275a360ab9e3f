"""Measure: how large report.html is (a script, not a timed test).

    python -m tests.benchmarks.bench_html          # writes tests/benchmarks/html.json

1. Every bundled replay scored by `python -m vbw` (a fresh process, as a user runs it):
   items, the replay's size, report.html's size and bytes per item.
2. The worst case the cap allows: the bundled GSM8K replay with every arm's text replaced
   by 1 MB, so every text is cut to vbw.report.browser.MAX_TEXT_CHARS.

Sizes depend on the replays and the code only, not on the machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "html.json"
MB = 1 << 20


def _html_size(args: list[str], tmp: Path) -> dict[str, Any]:
    out = tmp / "out"
    subprocess.run([sys.executable, "-m", "vbw", *args, f"hydra.run.dir={out}"], cwd=tmp,
                   check=True, capture_output=True, timeout=600)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {"items": report["n"] + report["excluded"]["n"],
            "html_bytes": (out / "report.html").stat().st_size}


def bundled() -> list[dict[str, Any]]:
    rows = []
    for replay in sorted((ROOT / "replays").glob("*/*/*.jsonl")):
        task, model, engine = replay.relative_to(ROOT / "replays").with_suffix("").parts
        with tempfile.TemporaryDirectory() as tmp:
            got = _html_size([f"task={task}", f"model={model}", f"engine={engine}"], Path(tmp))
        rows.append({"replay": str(replay.relative_to(ROOT)), "replay_bytes": replay.stat().st_size,
                     **got, "bytes_per_item": round(got["html_bytes"] / got["items"])})
    return rows


def worst_case() -> dict[str, Any]:
    """Every text of the 200-item GSM8K replay made 1 MB long."""
    source = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    out_lines = [lines[0]]
    texts = 0
    for line in lines[1:]:
        rec = json.loads(line)
        if "arms" in rec:
            for arm in rec["arms"].values():
                if arm.get("text") is not None:
                    arm["text"] = (arm["text"] + " ") * (MB // (len(arm["text"]) + 1) + 1)
                    texts += 1
        out_lines.append(json.dumps(rec))
    with tempfile.TemporaryDirectory() as tmp:
        replay = Path(tmp) / "big.jsonl"
        replay.write_text("\n".join(out_lines) + "\n", encoding="utf-8")
        got = _html_size(["task=gsm8k", f"replay={replay}"], Path(tmp))
        replay_bytes = replay.stat().st_size
    return {"replay": "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl, every text 1 MB",
            "texts": texts, "replay_bytes": replay_bytes, **got,
            "bytes_per_item": round(got["html_bytes"] / got["items"])}


def main() -> None:
    from vbw.report.browser import MAX_TEXT_CHARS

    data = {"measured": date.today().isoformat(), "max_text_chars": MAX_TEXT_CHARS,
            "bundled": bundled(), "worst_case": worst_case()}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
