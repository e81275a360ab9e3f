"""Benchmark: mode=conformance over the JSON-Schema-Test-Suite (Draft 2020-12) and the
bundled bfcl_simple and gsm8k tasks' schemas, every in-process engine in both whitespace
policies, side by side in one run (a script, not a timed test; issue 34).

    python -m tests.benchmarks.bench_conformance      # writes tests/benchmarks/conformance.json

Run it on an idle machine: the mask times are per token, and the schemas' children run
two at a time on two cores. The tasks use the items of their committed SmolLM2 replays
(the first 200), so docs/results.md can split those replays' accuracy by what each engine
rejects. docs/performance.md and docs/results.md read the file (python -m docs.generate).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from tests.conftest import TASK_CONF
from vbw.config import ConformanceConfig
from vbw.generate.conformance.engines import open_tokenizer
from vbw.modes.conformance import VALIDITY_SUITE, VALIDITY_TASK, conformance_report
from vbw.task.conformance import suite_cases, task_cases
from vbw.task.runner import load_task

OUT = Path(__file__).with_name("conformance.json")
TASK_ITEMS = {"bfcl_simple": 200, "gsm8k": 200}
KEPT = 40  # findings other than gold-shaped answers kept per engine in the file


def _trimmed(report) -> dict:
    """report.json without the per-schema outcomes of schemas that compiled (kept: the
    refused ones and their reasons) and with the first KEPT findings per engine beside
    every rejected gold-shaped answer (all are counted in findings_total)."""
    data = report.model_dump(mode="json")
    for e in data["engines"]:
        e["schemas"] = [s for s in e["schemas"] if not s["compiled"]]
        gold = [f for f in e["findings"] if f["keyword"] == "gold"]
        e["findings"] = gold + [f for f in e["findings"] if f["keyword"] != "gold"][:KEPT]
    return data


def main() -> None:
    cfg = ConformanceConfig()
    tok, model = open_tokenizer(cfg.tokenizer)
    runs = {}
    start = time.perf_counter()
    suite = conformance_report("suite draft2020-12", suite_cases(), cfg, tok, model,
                               VALIDITY_SUITE, None)
    runs["suite"] = {"seconds": round(time.perf_counter() - start, 1), "report": _trimmed(suite)}
    for name, n in TASK_ITEMS.items():
        task = load_task(TASK_CONF / f"{name}.yaml")
        start = time.perf_counter()
        report = conformance_report(f"task {name}", task_cases(task, task.items(n)), cfg,
                                    tok, model, VALIDITY_TASK, None)
        runs[name] = {"seconds": round(time.perf_counter() - start, 1), "n": n,
                      "report": _trimmed(report)}
    machine = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
               "amx": "amx_int8" in Path("/proc/cpuinfo").read_text()}
    OUT.write_text(json.dumps({"machine": machine, "runs": runs}, indent=1) + "\n",
                   encoding="utf-8")
    for key, run in runs.items():
        print(key, run["seconds"], "s")


if __name__ == "__main__":
    main()
