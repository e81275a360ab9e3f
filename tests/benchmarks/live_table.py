"""The README's live-benchmark block, from tests/benchmarks/live.json, with the figures of
tests/benchmarks/live.previous.json (before vbw's own decode loop) beside them."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIVE = HERE / "live.json"
PREVIOUS = HERE / "live.previous.json"
GROUPS = ("unconstrained", "prompt_json", "constrained", "reason_then_constrain")


def _was(value: object) -> str:
    return f" (was {value})" if value is not None else ""


def _prev_tps(prev: dict, engine: str, task: str, group: str) -> object:
    return prev.get("engines", {}).get(engine, {}).get("tasks", {}).get(task, {}).get(
        "decode_tps", {}).get(group)


def _decode_rows(d: dict, prev: dict) -> list[str]:
    rows = ["| engine | task | arm | tok/s | baseline tok/s | ratio to baseline | "
            "overhead µs/token | time to first token ms |", "|---|---|---|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        for task, arms in e["decode"].items():
            for group in GROUPS:
                a = arms.get(group)
                if a is None:
                    continue
                over = 1e6 / a["tps"] - 1e6 / a["baseline_tps"]
                rows.append(f"| {name} | {task} | `{group}` | {a['tps']}"
                            f"{_was(_prev_tps(prev, name, task, group))} | {a['baseline_tps']} | "
                            f"{a['tps'] / a['baseline_tps']:.2f}x | {over:.0f} | {a['ttft_ms']} |")
    return rows


def _ratio_rows(d: dict, prev: dict) -> list[str]:
    rows = ["| engine | task | constrained / prompt_json | s/item, KV reuse | "
            "s/item, no reuse | argmax refused (masked steps) |", "|---|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        for task, arms in e["decode"].items():
            ratio = arms["constrained"]["tps"] / arms["prompt_json"]["tps"]
            old = prev.get("engines", {}).get(name, {}).get("tasks", {}).get(task)
            was_ratio = (f"{old['decode_tps']['constrained'] / old['decode_tps']['prompt_json']:.2f}x"
                         if old else None)
            items = e["item_s"][task]
            rows.append(f"| {name} | {task} | {ratio:.2f}x{_was(was_ratio)} | {items['reuse']}"
                        f"{_was(old and old['reuse']['median_item_s'])} | {items['no_reuse']}"
                        f"{_was(old and old['no_reuse']['median_item_s'])} | "
                        f"{100 * e['masked_share']:.1f}% |")
    return rows


def _compile_rows(d: dict, prev: dict) -> list[str]:
    rows = ["| engine | compile s/schema p50 | p95 | max | schemas | unsupported | "
            "one-off vocabulary build (s) |", "|---|---|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        c = e["compile_s"]
        old = prev.get("engines", {}).get(name, {}).get("compile_s", {})
        rows.append(f"| {name} | {c['p50']}{_was(old.get('p50'))} | {c['p95']}"
                    f"{_was(old.get('p95'))} | {c['max']} | {c['n']} | {c['unsupported']} | "
                    f"{e['vocabulary_s']} |")
    return rows


def _recording_rows(d: dict, key: str = "recording",
                    what: str = "Recording interventions and the tax (issues 19, 33)",
                    column: str = "recording") -> list[str]:
    """A recording cost: decode speed of the enforced arms with `key`'s switch on against
    the same generations with it off (target: within 3%)."""
    if not all(key in e for e in d["engines"].values()):
        return [f"{what}: not measured in this live.json; "
                "rerun `python -m tests.benchmarks.bench_live`."]
    rows = [f"{what}:", "",
            f"| engine | task | enforced arms tok/s, {column} off | {column} on | cost |",
            "|---|---|---|---|---|"]
    for name, e in d["engines"].items():
        for task, r in e[key].items():
            cost = 100 * (1 - r["tps_on"] / r["tps_off"])
            rows.append(f"| {name} | {task} | {r['tps_off']} | {r['tps_on']} | "
                        f"{cost:.1f}% ({'met' if cost <= 3 else 'MISSED'}: target <= 3%) |")
    return rows


def _targets(d: dict) -> list[str]:
    lines = []
    for name, e in d["engines"].items():
        for task, arms in e["decode"].items():
            free = arms["unconstrained"]["tps"] / arms["unconstrained"]["baseline_tps"]
            con = arms["constrained"]["tps"] / arms["prompt_json"]["tps"]
            lines.append(f"- {name}, {task}: unconstrained {free:.2f}x the baseline "
                         f"({'met' if free >= 0.95 else 'MISSED'}: target >= 0.95x); "
                         f"constrained {con:.2f}x prompt_json "
                         f"({'met' if con >= 0.90 else 'MISSED'}: target >= 0.90x)")
    return lines


def live_table() -> str:
    d = json.loads(LIVE.read_text())
    prev = json.loads(PREVIOUS.read_text()) if PREVIOUS.is_file() else {}
    head = (f"SmolLM2-135M-Instruct Q4_1 on {d['cpu']} ({d['threads']} threads), measured "
            f"{d['measured']} in one run of `python -m tests.benchmarks.bench_live` (first "
            f"{d['items']['bfcl_simple']} BFCL and {d['items']['gsm8k']} GSM8K items, all four "
            f"arms, greedy, token caps {d['cap']}); \"was\" is the figure measured "
            f"{prev.get('measured', '?')} before vbw's own decode loop:")
    return "\n".join([head, "", *_decode_rows(d, prev), "", *_ratio_rows(d, prev), "",
                      *_compile_rows(d, prev), "", *_recording_rows(d), "",
                      *_recording_rows(d, "tax", "The grammar's tax alone (issue 33: the "
                                       "full mask at every step and its sum; interventions "
                                       "recorded both times)", "tax"), "",
                      "Targets (issue 10):", "", *_targets(d), "",
                      "Decode tok/s excludes the first token (prompt evaluation) and is the median "
                      "over generations; the baseline decodes the very prompt of each generation "
                      "for as many tokens with a bare `llama_decode` + native greedy sampler loop. "
                      "Overhead is 1/tok/s - 1/baseline tok/s. Seconds per item are medians."])
