"""The README's live-benchmark block, from tests/benchmarks/live.json."""

from __future__ import annotations

import json
from pathlib import Path

LIVE = Path(__file__).resolve().parent / "live.json"


def live_table() -> str:
    d = json.loads(LIVE.read_text())
    lines = [f"SmolLM2-135M-Instruct Q4_1 on {d['cpu']} ({d['threads']} threads), measured "
             f"{d['measured']} by `python -m tests.benchmarks.bench_live` "
             f"(first {d['items']['bfcl_simple']} BFCL and {d['items']['gsm8k']} GSM8K items, all "
             "four arms, greedy, token caps 384):", "",
             "| engine | task | decode tok/s unconstrained | prompt_json | constrained | "
             "constrained / prompt_json | s/item, KV reuse | s/item, no reuse | reuse / no reuse |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        for task, t in e["tasks"].items():
            tps = t["decode_tps"]
            speed = tps["constrained"] / tps["prompt_json"]
            reuse = t["reuse"]["median_item_s"] / t["no_reuse"]["median_item_s"]
            lines.append(f"| {name} | {task} | {tps['unconstrained']} | {tps['prompt_json']} | "
                         f"{tps['constrained']} | {speed:.2f}x | {t['reuse']['median_item_s']} | "
                         f"{t['no_reuse']['median_item_s']} | {reuse:.2f}x |")
    lines += ["", "| engine | compile s/schema p50 | p95 | max | schemas | unsupported | "
              "one-off vocabulary build (s) |", "|---|---|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        c = e["compile_s"]
        lines.append(f"| {name} | {c['p50']} | {c['p95']} | {c['max']} | {c['n']} | "
                     f"{c['unsupported']} | {e['vocabulary_s']} |")
    lines += ["", "Seconds per item are medians; decode tok/s excludes the first token (prompt "
              "evaluation). `constrained / prompt_json` is the per-token cost of the constraint "
              "on the same prompt; `reuse / no reuse` is what KV-cache reuse across arms saves "
              "per item (the tests check that it leaves every generation unchanged)."]
    return "\n".join(lines)
