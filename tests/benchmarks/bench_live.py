"""Benchmark: live generation on SmolLM2-135M against the thinnest llama.cpp loop.

    python -m tests.benchmarks.bench_live     # writes tests/benchmarks/live.json (~20 min)

Run it on an otherwise idle machine: llama.cpp spin-waits its threads, so any other load
distorts every figure. Everything below comes from ONE run, on the same items:
- baseline: the same model, threads and prompts decoded greedily by the thinnest loop
  llama-cpp-python allows: `llama_decode` on a one-token batch and llama.cpp's native
  greedy sampler, nothing else per token (written here, independent of vbw's loop);
- per engine and arm: decode tok/s (first token excluded), its ratio to the baseline on
  the same prompts, constrained / prompt_json, per-token overhead in microseconds over
  the baseline, time to first token, and the share of steps where the greedy-first check
  refused the argmax and the full vocabulary was searched;
- compile seconds per schema (p50/p95) over the first 200 BFCL schemas and the GSM8K
  schemas, each on a fresh cache;
- seconds per item (all four arms) with the KV cache reused and cleared;
- the cost of recording interventions (issue 19): the enforced arms of the same items
  decoded with the decoder's internal `record` switch off and on, alternately per
  generation, as decode tok/s of each and their ratio;
- the cost of the grammar's tax alone (issue 33): the same with `record_tax` off and on.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("VBW_BENCH_OUT", Path(__file__).resolve().parent / "live.json"))
ITEMS = {"bfcl_simple": int(os.environ.get("VBW_BENCH_BFCL", "10")),
         "gsm8k": int(os.environ.get("VBW_BENCH_GSM8K", "4"))}
CAP = 384


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def baseline_decode(runtime: Any, tokens: list[int], max_tokens: int) -> tuple[int, float]:
    """(tokens after the first, seconds for them) by the thinnest greedy loop."""
    lib = runtime._lib
    ctx = runtime.llm.ctx
    runtime.clear_kv()
    greedy = lib.llama_sampler_init_greedy()
    try:
        for start in range(0, len(tokens), runtime.llm.n_batch):
            chunk = tokens[start:start + runtime.llm.n_batch]
            ids = (lib.llama_token * len(chunk))(*chunk)  # kept alive through the decode
            if lib.llama_decode(ctx, lib.llama_batch_get_one(ids, len(chunk))) != 0:
                raise RuntimeError("baseline: llama_decode failed on the prompt")
        token = lib.llama_sampler_sample(greedy, ctx, -1)
        one = (lib.llama_token * 1)()
        n, t0 = 0, time.perf_counter()
        while n < max_tokens - 1 and not lib.llama_vocab_is_eog(runtime.vocab, token):
            one[0] = token
            if lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1)) != 0:
                raise RuntimeError("baseline: llama_decode failed")
            token = lib.llama_sampler_sample(greedy, ctx, -1)
            n += 1
        return n, time.perf_counter() - t0
    finally:
        lib.llama_sampler_free(greedy)
        runtime.clear_kv()


def _arm_group(key: str) -> str:
    return key.split("[", 1)[0]


def decode_figures(runtime: Any, engine: Any, tasks: dict, arms_of: dict) -> dict:
    """Per task and arm kind: vbw's tok/s and TTFT, and the baseline on the same prompts."""
    from vbw.config import MaxTokens
    from vbw.generate.items import generate_item
    from vbw.generate.local import LocalBackend

    caps = MaxTokens(free=CAP, json=CAP, package=CAP)
    backend = LocalBackend(runtime, engine)
    out: dict = {}
    for tname, task in tasks.items():
        tps: dict[str, list[float]] = {}
        base: dict[str, list[float]] = {}
        ttft: dict[str, list[float]] = {}
        for item in task.items(ITEMS[tname]):
            rec = generate_item(task, item, arms_of[tname], backend, caps)
            if rec.unsupported:
                continue
            for arm in arms_of[tname]:
                a = rec.arms[arm.key]
                dec = a.seconds - (a.ttft_seconds or 0.0)
                if a.n_tokens is None or a.n_tokens < 2 or dec <= 0:
                    continue
                group = _arm_group(arm.key)
                tps.setdefault(group, []).append((a.n_tokens - 1) / dec)
                ttft.setdefault(group, []).append(a.ttft_seconds or 0.0)
                prompt = runtime.chat_tokens(task.messages(item, arm, rec.arms["unconstrained"].text)
                                             if arm.kind == "reason_then_constrain"
                                             else task.messages(item, arm))
                n, secs = baseline_decode(runtime, prompt, a.n_tokens)
                if n > 0:
                    base.setdefault(group, []).append(n / secs)
        out[tname] = {g: {"tps": round(_median(tps[g]), 1),
                          "baseline_tps": round(_median(base.get(g, [])), 1),
                          "ttft_ms": round(1000 * _median(ttft[g]), 1), "n": len(tps[g])}
                      for g in tps}
    return out


def compile_figures(engine: Any, schemas: list[dict]) -> dict:
    import numpy as np

    secs, unsupported = [], 0
    for schema in schemas:
        engine._cache.clear()
        try:
            secs.append(engine.compile(schema)[1])
        except Exception:
            unsupported += 1
    return {"n": len(secs), "p50": round(float(np.percentile(secs, 50)), 5),
            "p95": round(float(np.percentile(secs, 95)), 5), "max": round(max(secs), 4),
            "unsupported": unsupported}


def item_seconds(runtime: Any, engine_name: str, tasks: dict, arms_of: dict) -> dict:
    from vbw.config import MaxTokens
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.local import LocalBackend

    caps = MaxTokens(free=CAP, json=CAP, package=CAP)
    out: dict = {}
    for reuse in (True, False):
        runtime.reuse_kv = reuse
        for tname, task in tasks.items():
            backend = LocalBackend(runtime, make_engine(engine_name, runtime))
            for item in task.items(1):  # compile and warm outside the timing
                generate_item(task, item, arms_of[tname], backend, caps)
            secs = [rec.item_seconds for item in task.items(ITEMS[tname])
                    if not (rec := generate_item(task, item, arms_of[tname], backend,
                                                 caps)).unsupported]
            out.setdefault(tname, {})["reuse" if reuse else "no_reuse"] = round(_median(secs), 2)
    runtime.reuse_kv = True
    return out


def recording_cost(runtime: Any, engine: Any, tasks: dict, arms_of: dict,
                   switch: str = "record") -> dict:
    """Per task: decode tok/s of the enforced arms with the decoder's `switch` off and on,
    alternately per generation: `record` (interventions and the tax) or `record_tax`
    (the tax alone, interventions recorded both times). Same prompts, same tokens:
    recording never changes a choice."""
    from vbw.generate.backend import GenerateConfig
    from vbw.generate.items import FREE
    from vbw.generate.local import LocalBackend

    backend = LocalBackend(runtime, engine)
    out: dict = {}
    for tname, task in tasks.items():
        tokens = {False: 0, True: 0}
        seconds = {False: 0.0, True: 0.0}
        for item in task.items(ITEMS[tname]):
            free = backend.generate(task.messages(item, FREE),
                                    GenerateConfig(max_tokens=CAP)).text
            for arm in arms_of[tname]:
                if not arm.enforced:
                    continue
                try:
                    engine.compile(item.schemas[arm.schema])
                except Exception:
                    continue  # unsupported schema: not decoded
                config = GenerateConfig(max_tokens=CAP, schema=item.schemas[arm.schema])
                for record in (False, True):
                    setattr(runtime.decoder, switch, record)
                    gen = backend.generate(task.messages(item, arm, free_text=free), config)
                    if gen.n_tokens and gen.n_tokens > 1:
                        tokens[record] += gen.n_tokens - 1
                        seconds[record] += gen.seconds - (gen.ttft_seconds or 0.0)
        setattr(runtime.decoder, switch, True)
        off, on = (tokens[r] / seconds[r] if seconds[r] else float("nan")
                   for r in (False, True))
        out[tname] = {"tps_off": round(off, 1), "tps_on": round(on, 1),
                      "tokens": tokens[True]}
    return out


class StepCounter:
    """Counts, through the decoder, how often the argmax was refused (masked steps):
    the constrained generations' steps (end of generation included) and Decoded's
    masked_steps."""

    def __init__(self, decoder: Any) -> None:
        self.steps = self.masked = 0
        self._decoder = decoder
        self._run = decoder.run
        decoder.run = self

    def __call__(self, prompt: Any, max_tokens: int, rule: Any = None, *rest: Any) -> Any:
        done = self._run(prompt, max_tokens, rule, *rest)
        if rule is not None:
            self.steps += len(done.tokens) + (done.finish_reason == "stop")
            self.masked += done.masked_steps
        return done

    def remove(self) -> None:
        del self._decoder.run  # the instance attribute: the method shows again


def engines_requires() -> tuple[str, ...]:
    """What the benchmark runs on: the local backend's packages and every engine's, as
    each kind declares them (a live run's header records its own engine's alone)."""
    from vbw.config import LocalBackendConfig
    from vbw.generate.engines import ENGINES

    return (*LocalBackendConfig.requires,
            *(p for name in ENGINES for p in ENGINES.get(name).requires))


def main() -> None:
    from vbw.config import bundled_model
    from vbw.generate.engines import ENGINES, make_engine
    from vbw.generate.model import resolve_model
    from vbw.generate.provenance import cpu_name, versions
    from vbw.generate.runtime import Runtime
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    mf = resolve_model(bundled_model("smollm2_135m"))
    runtime = Runtime(mf.path, n_ctx=4096,
                      n_threads=int(os.environ.get("VBW_BENCH_THREADS", "2")))
    tasks = {t: load_task(ROOT / "conf" / "task" / f"{t}.yaml") for t in ITEMS}
    arms_of = {t: task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
               for t, task in tasks.items()}
    schemas = [it.schemas["arguments"] for it in tasks["bfcl_simple"].items(200)]
    schemas += list(tasks["gsm8k"].items(1)[0].schemas.values())
    result: dict = {"model": mf.file, "cpu": cpu_name(), "threads": runtime.n_threads,
                    "versions": versions(engines_requires()),
                    "measured": time.strftime("%Y-%m-%d"),
                    "items": ITEMS, "cap": CAP, "engines": {}}
    for name in ENGINES:
        engine = make_engine(name, runtime)
        counter = StepCounter(runtime.decoder)
        entry = {"decode": decode_figures(runtime, engine, tasks, arms_of)}
        entry["masked_share"] = round(counter.masked / max(counter.steps, 1), 4)
        counter.remove()
        fresh = make_engine(name, runtime)
        t0 = time.perf_counter()
        if hasattr(fresh, "vocabulary"):
            fresh.vocabulary()  # one-off per engine, reported apart from compile times
        entry["vocabulary_s"] = round(time.perf_counter() - t0, 3)
        entry["compile_s"] = compile_figures(fresh, schemas)
        entry["item_s"] = item_seconds(runtime, name, tasks, arms_of)
        entry["recording"] = recording_cost(runtime, make_engine(name, runtime), tasks,
                                            arms_of)
        entry["tax"] = recording_cost(runtime, make_engine(name, runtime), tasks, arms_of,
                                      "record_tax")
        result["engines"][name] = entry
        print(name, json.dumps(entry), flush=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
