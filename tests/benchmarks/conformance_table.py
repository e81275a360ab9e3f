"""docs/ blocks from tests/benchmarks/conformance.json (bench_conformance's one run): the
suite's engine and category tables (docs/results.md), and the mask time per token per
engine on the suite and the bundled tasks' schemas beside MaskBench's published figures
(docs/performance.md)."""

from __future__ import annotations

import json
from pathlib import Path

from vbw.report.conformance import HEAD, category_cell, engine_cells

BENCH = Path(__file__).with_name("conformance.json")
# llguidance's MaskBench (github.com/guidance-ai/jsonschemabench, maskbench/), as issue 34
# quotes it: schemas passing out of 11,306; invalid instances wrongly accepted; mask time
# per token in microseconds
MASKBENCH = {"llguidance": (8909, 0, 64), "outlines": (7050, 822, 1858),
             "llamacpp": (6505, 649, 16565)}


def _runs() -> dict:
    return json.loads(BENCH.read_text(encoding="utf-8"))["runs"]


def _table(engines: list[dict]) -> list[str]:
    from vbw.score.conformance import EngineReport

    out = ["| " + " | ".join(HEAD) + " |", "|---" * len(HEAD) + "|"]
    for e in engines:
        out.append("| " + " | ".join(engine_cells(EngineReport.model_validate(e))) + " |")
    return out


def suite_block() -> str:
    """The suite's per-engine table and its keyword-category table."""
    from vbw.score.conformance import Figures

    run = _runs()["suite"]
    r = run["report"]
    out = [f"{r['schemas']} schemas and {r['instances']} instances of the JSON-Schema-Test-"
           f"Suite (Draft 2020-12, required tests), SmolLM2-135M's tokenizer, every engine in "
           f"both whitespace policies, in one run of {run['seconds']:.0f} s "
           "(`python -m tests.benchmarks.bench_conformance`):", ""]
    out += _table(r["engines"])
    cats: dict[str, None] = {}
    for e in r["engines"]:
        cats.update(dict.fromkeys(e["categories"]))
    out += ["", "By keyword category (compiled/sound/exact of the category's schemas; the "
            "median mask time):", "",
            "| category | " + " | ".join(e["label"] for e in r["engines"]) + " |",
            "|---" * (len(r["engines"]) + 1) + "|"]
    for c in cats:
        cells = [category_cell(Figures.model_validate(e["categories"][c]))
                 if c in e["categories"] else "-" for e in r["engines"]]
        out.append(f"| `{c}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def task_table(task: str) -> str:
    """One bundled task's per-engine table."""
    run = _runs()[task]
    r = run["report"]
    return "\n".join([f"{task}, its first {run['n']} items: {r['schemas']} distinct schemas, "
                      f"{r['instances']} instances (gold-shaped answers, minimal instances, "
                      f"one-keyword mutations), {run['seconds']:.0f} s:", "", *_table(r["engines"])])


def mask_block() -> str:
    """Mask time per token per engine, suite and tasks side by side, and MaskBench's."""
    runs = _runs()
    names = [e["label"] for e in runs["suite"]["report"]["engines"]]
    head = ["engine", *(f"{k}: median (p99) µs" for k in runs), "MaskBench µs",
            "MaskBench passing / invalid accepted"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for label in names:
        cells = [label]
        for run in runs.values():
            e = next(x for x in run["report"]["engines"] if x["label"] == label)
            a = e["all"]
            cells.append("-" if a["mask_us_median"] is None else
                         f"{a['mask_us_median']:.1f} ({a['mask_us_p99']:.1f})")
        engine = label.split(" ")[0]
        passing, accepted, us = MASKBENCH[engine]
        cells += [f"{us:,}", f"{passing:,} / {accepted:,}"]
        out.append("| " + " | ".join(cells) + " |")
    suite = {e["label"]: e["all"]["mask_us_median"] for e in runs["suite"]["report"]["engines"]
             if e["all"]["mask_us_median"] is not None}
    here = " < ".join(sorted(suite, key=suite.get))
    theirs = " < ".join(sorted(MASKBENCH, key=lambda k: MASKBENCH[k][2]))
    out += ["", f"Median mask time on the suite, fastest first: {here}. MaskBench's order: "
            f"{theirs}."]
    total = sum(run["seconds"] for run in runs.values())
    out += ["", f"The suite ran in {runs['suite']['seconds']:.0f} s for all six engine "
            f"configurations (the target: under 600 s); the three runs together "
            f"{total:.0f} s."]
    return "\n".join(out)
