"""Benchmark: batched live decoding (batch.sequences) against the one-sequence loop and
against the machine's limit, on SmolLM2-135M.

    python -m tests.benchmarks.bench_batched   # writes tests/benchmarks/batched.json (~45 min)

Run it on an otherwise idle machine (llama.cpp spin-waits its threads). Every case runs
in a fresh process: llama.cpp's OpenMP threads belong to the thread that first decodes,
and a second thread decoding in the same process competes with them, which would charge
one case for another. Everything comes from ONE run:
- bare: `llama_decode` of B sequences, one token each per step (each in its own KV
  stream, as vbw's batch has them; every row's logits read and its argmax taken), no
  engine, with flash attention (batch.flash_attn=true) at B = 1, 2, 4, 8, 16 and
  without at B = 1, 8, 16: the ceiling the batch can reach on this machine, after a
  short prompt; and at B = 1, 8, 16 after the prompts of each task's first B items (the
  contexts vbw's rows attend over: the ceiling at the same batch size for that task);
- roofline: the model's weight bytes read once per step over the memory bandwidth
  (numpy copy): the steps per second memory alone would allow;
- loop: vbw's own live path (vbw.generate.items.generate_item for every arm, items in
  flight through vbw.generate.live.in_order) over the first items of GSM8K and BFCL
  simple, schemas compiled beforehand: output tokens per second of all arms, greedy and
  with k = 5 samples, batch.sequences = 1 (today's loop) and more, with flash attention
  and (greedy, 16) without; greedy texts compared with the one-sequence run's, and each
  arm's validity, accuracy and wrong-but-valid rate too (exact McNemar test on the paired
  items: a rate "moved" where p < 0.05, the paired CI excluding no change), and flash
  attention's texts at 16 against its texts at 8 (a record must not depend on its
  batch); the bare decode at each batched run's mean batch (rounded), after the task's
  prompts (the ceiling at the batch size the run actually had: its tail, where fewer
  sequences are left than slots, lowers the mean), and an upper bound on the mean batch
  of any schedule of the run's own lengths (reason_then_constrain waits for its free
  text, so the longest such chain bounds the run's steps from below). tok/s: all
  output tokens over the wall clock; decode tok/s:
  the tokens after each generation's first over the wall clock less prompt evaluation
  (bench_live's decode figure, which a batch is compared on with the bare decode);
- mask: each engine's seconds per step per sequence spent choosing tokens (the rule's
  mask and vbw's picking) in a batch of 8, on BFCL simple.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("VBW_BENCH_OUT", Path(__file__).resolve().parent / "batched.json"))
THREADS = int(os.environ.get("VBW_BENCH_THREADS", "2"))
ITEMS = int(os.environ.get("VBW_BENCH_ITEMS", "20"))
SAMPLED_ITEMS = int(os.environ.get("VBW_BENCH_SAMPLED_ITEMS", "4"))
BARE = [(b, True) for b in (1, 2, 4, 8, 16)] + [(b, False) for b in (1, 8, 16)]
SEQUENCES = (1, 8, 16)
TASKS = ("gsm8k", "bfcl_simple")
CAP = 384
ARM_KINDS = ["unconstrained", "prompt_json", "constrained", "reason_then_constrain"]


def _model_path() -> str:
    from vbw.config import bundled_model
    from vbw.generate.model import resolve_model

    return resolve_model(bundled_model("smollm2_135m")).path


def _task_prompts(rt: Any, task_name: str, n: int) -> list[list[int]]:
    """The prompt_json prompts (the same as constrained's) of the task's first `n` items."""
    from vbw.task.arms import task_arms
    from vbw.task.runner import load_task

    task = load_task(ROOT / "conf" / "task" / f"{task_name}.yaml")
    arm = next(a for a in task_arms(task.schema_names, task.spec.answer_schema,
                                    ["prompt_json"]))
    return [list(rt.chat_tokens(task.messages(item, arm))) for item in task.items(n)]


def bare(sequences: int, task_name: str | None = None, steps: int = 64,
         flash_attn: bool = True) -> dict:
    """Tokens per second of `sequences` rows per llama_decode, nothing else per step but
    reading each row's logits and its argmax (the same context settings as vbw's). Each
    sequence starts after a short GSM8K question, or, with `task_name`, after the prompt
    of one of the task's items (attention then spans the contexts vbw's rows have)."""
    import numpy as np

    from vbw.generate.runtime import Runtime

    rt = Runtime(_model_path(), n_ctx=4096, n_threads=THREADS, sequences=max(sequences, 2),
                 flash_attn=flash_attn)
    lib, ctx, n_vocab = rt._lib, rt._batch_ctx, rt.n_vocab
    prompts = (_task_prompts(rt, task_name, sequences) if task_name else
               [rt.chat_tokens("Natalia sold clips to 48 of her friends in April, and then "
                               "she sold half as many clips in May. How many clips did "
                               "Natalia sell altogether in April and May?")] * sequences)
    batch = lib.llama_batch_init(512, 0, 1)

    def decode(rows: list[tuple[int, int, int, bool]]) -> None:
        batch.n_tokens = len(rows)
        for i, (token, pos, seq, logits) in enumerate(rows):
            batch.token[i], batch.pos[i], batch.seq_id[i][0] = token, pos, seq
            batch.n_seq_id[i], batch.logits[i] = 1, logits
        if lib.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    for seq, prompt in enumerate(prompts):
        rows = [(t, i, seq, i == len(prompt) - 1) for i, t in enumerate(prompt)]
        for start in range(0, len(rows), 512):
            decode(rows[start:start + 512])
    tokens = [int(p[-1]) for p in prompts]
    times = []
    for rep in range(3):  # the median of three spans of `steps` steps
        start = time.perf_counter()
        for step in range(rep * steps, (rep + 1) * steps):
            decode([(tokens[s], len(prompts[s]) + step, s, True) for s in range(sequences)])
            for s in range(sequences):
                row = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx, s), shape=(n_vocab,))
                tokens[s] = int(row.argmax())
        times.append(time.perf_counter() - start)
    seconds = sorted(times)[1]
    lib.llama_batch_free(batch)
    rt.close()
    return {"sequences": sequences, "task": task_name, "flash_attn": flash_attn,
            "mean_prompt": round(sum(map(len, prompts)) / sequences),
            "tok_s": round(sequences * steps / seconds, 1),
            "ms_per_step": round(1000 * seconds / steps, 2)}


def roofline() -> dict:
    """Weight bytes, memory bandwidth (a numpy copy of 512 MiB, best of 5) and the decode
    steps per second memory alone allows."""
    import numpy as np

    size = Path(_model_path()).stat().st_size
    a = np.ones(64 << 20, dtype=np.float64)  # 512 MiB
    b = np.empty_like(a)
    best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    bandwidth = 2 * a.nbytes / best  # read and write
    return {"weights_bytes": size, "bandwidth_gb_s": round(bandwidth / 1e9, 1),
            "steps_per_s": round(bandwidth / size, 1)}


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def loop(task_name: str, sequences: int, samples: int, engine: str = "outlines",
         items: int = ITEMS, flash_attn: bool = True) -> dict:
    """vbw's live path over the task's first `items` items, every arm: output tokens per
    second (wall clock of the whole generation, compiles done beforehand)."""
    from vbw.config import DecodingConfig, MaxTokens
    from vbw.generate.engines import make_engine
    from vbw.generate.items import generate_item
    from vbw.generate.live import in_order, items_in_flight
    from vbw.generate.local import LocalBackend
    from vbw.generate.runtime import Runtime
    from vbw.task.arms import task_arms
    from vbw.task.runner import load_task

    task = load_task(ROOT / "conf" / "task" / f"{task_name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, ARM_KINDS)
    todo = task.items(items)
    rt = Runtime(_model_path(), n_ctx=4096, n_threads=THREADS, sequences=sequences,
                 flash_attn=flash_attn)
    backend = LocalBackend(rt, make_engine(engine, rt))
    for item in todo:
        for arm in arms:
            if arm.enforced:
                try:
                    backend.compile(item.schemas[arm.schema])  # type: ignore[index]
                except Exception:
                    pass  # generate_item records it unsupported
    caps = MaxTokens(free=CAP, json=CAP, package=CAP)
    decoding = (DecodingConfig() if samples == 1
                else DecodingConfig(temperature=0.7, samples=samples))
    choosing = _time_choosing(rt)
    prefill = _time_prefill(rt)
    start = time.perf_counter()
    records = list(in_order(todo, lambda it: generate_item(task, it, arms, backend, caps,
                                                           decoding=decoding),
                            items_in_flight(sequences)))
    wall = time.perf_counter() - start
    tokens = sum(a.n_tokens or 0 for r in records
                 for sample in [r.arms, *(r.samples or [])] for a in sample.values())
    generations = sum(1 for r in records for sample in [r.arms, *(r.samples or [])]
                      for a in sample.values() if a.n_tokens)
    out = {"task": task_name, "sequences": sequences, "samples": samples, "engine": engine,
           "flash_attn": flash_attn and sequences > 1,
           "items": len(todo), "tokens": tokens, "seconds": round(wall, 2),
           "tok_s": round(tokens / wall, 1), "prefill_s": round(prefill[0], 2),
           "decode_tok_s": round((tokens - generations) / (wall - prefill[0]), 1),
           "texts": {r.id: {k: a.text for k, a in r.arms.items()} for r in records},
           "states": _states(task, todo, arms, records)}
    b = rt.batcher
    if b is not None:
        out["mean_batch_bound"] = _mean_batch_bound(records, tokens, sequences)
        out.update(steps=b.steps, mean_batch=round(b.rows / max(b.steps, 1), 2),
                   moved=b.slots.moved, spared=b.slots.spared, prompt_tokens=b.prompt_tokens,
                   choose_us_per_row=round(1e6 * choosing[0] / max(b.rows, 1), 1),
                   decode_ms_per_step=round(1000 * choosing[1] / max(b.steps, 1), 2))
    rt.close()
    return out


def _mean_batch_bound(records: list, tokens: int, sequences: int) -> float:
    """An upper bound on the mean batch of any schedule of these records (`tokens` output
    tokens in all): reason_then_constrain starts only after its free text ends
    (vbw.generate.items), so a run takes at least its longest chain of steps (an item's
    free text then reason_then_constrain, or any one arm) and at least its tokens over
    `sequences` steps."""
    from vbw.generate.items import FREE

    def chain(r: Any) -> int:
        samples = [r.arms, *(r.samples or [])]
        free = max((s[FREE.key].n_tokens or 0 for s in samples if FREE.key in s), default=0)
        then = max((a.n_tokens or 0 for s in samples for k, a in s.items()
                    if k.startswith("reason_then_constrain")), default=0)
        alone = max((a.n_tokens or 0 for s in samples for a in s.values()), default=0)
        return max(free + then, alone)

    steps = max(max(map(chain, records), default=1), -(-tokens // sequences))
    return round(tokens / steps, 2)


def _states(task: Any, todo: list, arms: list, records: list) -> dict:
    """Per arm, each item's [valid, right] as vbw scores them (valid -1: no contract)."""
    from vbw.score.states import arm_states
    from vbw.task.validity import Validators

    validators, out = Validators(), {}
    for item, rec in zip(todo, records):
        valid, right = arm_states(task, item, {k: a.text for k, a in rec.arms.items()},
                                  arms, validators)
        out[rec.id] = {a.key: [v, bool(r)] for a, v, r in zip(arms, valid, right)}
    return out


def _moved(one: dict, other: dict) -> list[str]:
    """`arm: metric` for each of vbw's per-item metrics (vbw.score.metrics.metric_columns:
    validity, accuracy, wrong-but-valid) whose paired change between two runs of the same
    items is significant (exact McNemar, p < 0.05)."""
    import numpy as np

    from vbw.score.metrics import metric_columns
    from vbw.score.paired import ALPHA, mcnemar_p
    from vbw.score.states import ItemStates
    from vbw.task.arms import parse_arm

    keys = list(next(iter(one["states"].values())))
    ids = list(one["states"])
    arms = [parse_arm(k) for k in keys]

    def item_states(run: dict) -> ItemStates:
        rows = [[run["states"][i][k] for k in keys] for i in ids]
        return ItemStates(ids=ids, arms=arms, excluded=[], excluded_reasons={},
                          valid=np.array([[v for v, _ in r] for r in rows]),
                          right=np.array([[bool(x) for _, x in r] for r in rows]))

    a_st, b_st = item_states(one), item_states(other)
    out = []
    for j, key in enumerate(keys):
        a_cols, b_cols = metric_columns(a_st, j), metric_columns(b_st, j)
        for name, a in a_cols.items():
            b = b_cols[name]
            n10, n01 = int((a & ~b).sum()), int((b & ~a).sum())
            if n10 + n01 and mcnemar_p(n10, n01) < ALPHA:
                out.append(f"{key}: {name}")
    return out


def _time_choosing(rt: Any) -> list[float]:
    """[seconds choosing tokens, seconds in batched llama_decode], filled as it runs."""
    totals = [0.0, 0.0]
    b = rt.batcher
    if b is None:
        return totals
    advance, decode_rows = b._advance, b._decode_rows

    def timed_advance(slot: Any) -> None:
        start = time.perf_counter()
        advance(slot)
        totals[0] += time.perf_counter() - start

    def timed_rows() -> None:
        start = time.perf_counter()
        decode_rows()
        totals[1] += time.perf_counter() - start

    b._advance, b._decode_rows = timed_advance, timed_rows
    return totals


def _time_prefill(rt: Any) -> list[float]:
    """[seconds evaluating prompts], filled as it runs, in either loop: the rest of the
    wall clock is decoding (and vbw's work around it)."""
    totals = [0.0]
    owner, name = (rt.batcher, "_prefill") if rt.batcher is not None else (rt.decoder, "prefill")
    inner = getattr(owner, name)

    def timed(*args: Any) -> None:
        start = time.perf_counter()
        inner(*args)
        totals[0] += time.perf_counter() - start

    setattr(owner, name, timed)
    return totals


def _case(kind: str, **kw: Any) -> dict:
    """One case in a fresh process (see the module docstring)."""
    proc = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_batched", "--case",
                           json.dumps({"kind": kind, **kw})], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} {kw}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _differ(one: dict, other: dict) -> int:
    """Greedy texts that differ between two runs of the same items."""
    return sum(other["texts"][i][k] != text for i, arms in one["texts"].items()
               for k, text in arms.items())


def main() -> None:
    from vbw.generate.provenance import cpu_name, versions

    result: dict = {"cpu": cpu_name(), "threads": THREADS, "items": ITEMS,
                    "sampled_items": SAMPLED_ITEMS, "cap": CAP,
                    "versions": versions(("llama-cpp-python", "outlines", "llguidance")),
                    "measured": time.strftime("%Y-%m-%d")}
    result["roofline"] = _case("roofline")
    result["bare"] = [_case("bare", sequences=b, flash_attn=fa) for b, fa in BARE]
    print(json.dumps(result["bare"]), flush=True)
    result["bare_task"] = [_case("bare", sequences=b, task_name=t, flash_attn=fa)
                           for t in TASKS for b, fa in [*[(b, True) for b in SEQUENCES],
                                                        (1, False), (16, False)]]
    print(json.dumps(result["bare_task"]), flush=True)
    runs = []
    for task_name in TASKS:
        greedy = [_case("loop", task_name=task_name, sequences=s, samples=1)
                  for s in SEQUENCES]
        greedy.append(_case("loop", task_name=task_name, sequences=16, samples=1,
                            flash_attn=False))
        for run in greedy:
            run["texts_differ"] = _differ(greedy[0], run)
            run["rates_moved"] = _moved(greedy[0], run)
        # composition: flash attention's texts at 8 and at 16 sequences per decode
        greedy[2]["texts_differ_from_8"] = _differ(greedy[1], greedy[2])
        for run in greedy[1:]:  # the ceiling at the batch the run actually had
            run["bare_at_mean_batch"] = _case(
                "bare", sequences=max(1, round(run["mean_batch"])), task_name=task_name,
                flash_attn=run["flash_attn"])["tok_s"]
        sampled = {s: _case("loop", task_name=task_name, sequences=s, samples=5,
                            items=SAMPLED_ITEMS) for s in SEQUENCES}
        for run in [*greedy, *sampled.values()]:
            run.pop("texts")
            run.pop("states")
            runs.append(run)
            print(json.dumps(run), flush=True)
    result["loop"] = runs
    result["mask"] = []
    for engine in ("outlines", "llguidance", "llamacpp"):
        run = _case("loop", task_name="bfcl_simple", sequences=8, samples=1, engine=engine,
                    items=8)
        run.pop("texts")
        run.pop("states")
        result["mask"].append(run)
        print(json.dumps(run), flush=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        spec = json.loads(sys.argv[2])
        kind = spec.pop("kind")
        print(json.dumps({"roofline": roofline, "bare": bare, "loop": loop}[kind](**spec)))
    else:
        main()
