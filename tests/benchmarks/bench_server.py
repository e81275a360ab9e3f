"""Benchmark: in-process generation vs a local OpenAI-compatible server, and how many
generations the two backends share (a script, not a timed test).

    python -m tests.benchmarks.bench_server    # writes tests/benchmarks/server.json (~5 min)

On SmolLM2-135M, the first 10 BFCL simple items, all four arms, caps 384, greedy: the
in-process backend with the `llamacpp` engine (GBNF, like the server's own grammar), then
llama-cpp-python's server (`python -m llama_cpp.server`, the same GGUF and threads) through
vbw's server backend at concurrency 1 and 3. Per arm it counts identical texts between the
backends and between the two concurrencies. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

OUT = Path(os.environ.get("VBW_BENCH_OUT", Path(__file__).resolve().parent / "server.json"))
N_ITEMS = int(os.environ.get("VBW_BENCH_ITEMS", "10"))
THREADS = int(os.environ.get("VBW_BENCH_THREADS", "2"))
CAPS = {"free": 384, "json": 384, "package": 384}


def _run(task, items, arms, backend, concurrency: int) -> tuple[float, dict]:
    """Wall seconds per item, and the records by id."""
    from vbw.config import MaxTokens
    from vbw.generate.items import generate_item
    from vbw.generate.live import in_order

    caps = MaxTokens.model_validate(CAPS)
    start = time.perf_counter()
    records = list(in_order(items, lambda it: generate_item(task, it, arms, backend, caps),
                            concurrency))
    return (time.perf_counter() - start) / len(items), {r.id: r for r in records}


def _agreement(a: dict, b: dict, arms) -> dict[str, int]:
    """Per arm, items whose two texts are identical (both generated, none excluded)."""
    both = [i for i in a if i in b and not a[i].unsupported and not b[i].unsupported]
    return {arm.key: sum(a[i].arms[arm.key].text == b[i].arms[arm.key].text for i in both)
            for arm in arms} | {"items": len(both)}


def main() -> None:
    from tests.generate.conftest import LlamaServer
    from vbw.config import LocalBackendConfig, OpenAIBackendConfig, bundled_model
    from vbw.generate.engines import ENGINES, make_engine
    from vbw.generate.local import LocalBackend
    from vbw.generate.model import resolve_model
    from vbw.generate.provenance import cpu_name, versions
    from vbw.generate.runtime import DEFAULT_SEED, Runtime
    from vbw.generate.server.client import OpenAIServerBackend
    from vbw.resources import bundled
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    # what it runs on, as the kinds declare it: the local backend with llamacpp (and the
    # server is llama-cpp-python's own; the openai kind itself needs no package)
    requires = (*LocalBackendConfig.requires, *ENGINES.get("llamacpp").requires)
    mf = resolve_model(bundled_model("smollm2_135m"))
    task = load_task(bundled("conf") / "task" / "bfcl_simple.yaml")
    items = task.items(N_ITEMS)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    runtime = Runtime(mf.path, n_ctx=4096, n_threads=THREADS)
    local_s, local = _run(task, items, arms, LocalBackend(runtime, make_engine("llamacpp",
                                                                               runtime)), 1)
    del runtime
    log = Path(tempfile.mkdtemp()) / "server.log"
    server = LlamaServer(Path(mf.path), log, threads=THREADS, n_ctx=4096)
    server.start()
    try:
        per, texts = {}, {}
        for c in (1, 3):
            settings = OpenAIBackendConfig(name="openai", base_url=server.base_url,
                                           model=server.model, dialect="llama_cpp_python",
                                           concurrency=c)
            per[c], texts[c] = _run(task, items, arms,
                                    OpenAIServerBackend(settings, seed=DEFAULT_SEED), c)
    finally:
        server.stop()
    result = {"model": mf.file, "cpu": cpu_name(), "threads": THREADS, "items": N_ITEMS,
              "measured": time.strftime("%Y-%m-%d"), "versions": versions(requires),
              "s_per_item": {"in_process": round(local_s, 2), "server_c1": round(per[1], 2),
                             "server_c3": round(per[3], 2)},
              "item_seconds_median_in_process": round(statistics.median(
                  r.item_seconds for r in local.values() if r.item_seconds), 2),
              "agreement_in_process_vs_server": _agreement(local, texts[1], arms),
              "agreement_server_c1_vs_c3": _agreement(texts[1], texts[3], arms),
              "excluded_in_process": sorted(i for i, r in local.items() if r.unsupported),
              "excluded_server": sorted(i for i, r in texts[1].items() if r.unsupported)}
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
