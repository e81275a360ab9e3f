"""Live generation: drive one model through the arms of a task and append a replay.

Per item the arms run in the order that lets the KV cache serve shared prefixes:
unconstrained, then reason_then_constrain (it extends that conversation), then for each
schema prompt_json and constrained (same prompt). Every arm goes through the same
runtime and the same reuse setting, so paired comparisons stay fair.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from vbw.config import ModelConfig, RunConfig
from vbw.errors import EngineError, ReplayError, UnsupportedSchema, one_line
from vbw.generate.canary import run_canary
from vbw.generate.engines import Engine, make_engine
from vbw.generate.model import ModelFile, resolve_model
from vbw.generate.progress import Progress
from vbw.generate.provenance import hardware, now, versions
from vbw.generate.runtime import DEFAULT_SEED, LIVE_EXTRA_HINT, SAMPLING, Generation, Runtime
from vbw.replay import (FORMAT, ArmRecord, CompleteHeader, EndV1, ItemRecord, ModelInfo,
                        ReplayHeader, ReplayWriter, read_replay)
from vbw.task.arms import Arm, task_arms
from vbw.task.runner import Item, Task

# header fields that must match for a resumed run to continue the same experiment
_RESUME_KEYS = ("task", "engine", "arms", "model", "decoding", "max_tokens", "kv_reuse")


def prompt_hash(task: Task, item: Item, arms: list[Arm]) -> str:
    """sha256 of every first-turn prompt of the item (the package turn follows from them)."""
    msgs = {a.key: task.messages(item, a, free_text="") for a in arms}
    return hashlib.sha256(json.dumps(msgs).encode()).hexdigest()


def _source(cfg: RunConfig, mf: ModelFile) -> str:
    m = cfg.model
    if mf.source == "hub":
        return f"{m.repo}@{m.revision}/{m.file}"
    if mf.source == "package":
        return f"pip:{m.package}/{mf.file}"
    return f"path:{mf.path}"


def _cap(cfg: RunConfig, arm: Arm) -> int:
    caps = cfg.arms.max_tokens
    return {"unconstrained": caps.free, "prompt_json": caps.json_, "constrained": caps.json_,
            "reason_then_constrain": caps.package}[arm.kind]


def _record(gen: Generation, reuses: str | None = None) -> ArmRecord:
    return ArmRecord(text=gen.text, seconds=round(gen.seconds, 4),
                     compile_seconds=round(gen.compile_seconds, 5), n_tokens=gen.n_tokens,
                     ttft_seconds=round(gen.ttft_seconds, 4), finish_reason=gen.finish_reason,
                     reuses=reuses)


def generate_item(task: Task, item: Item, arms: list[Arm], engine: Engine,
                  cfg: RunConfig) -> ItemRecord:
    """All arms of one item; an uncompilable schema is recorded, not generated around."""
    start = time.perf_counter()
    unsupported: dict[str, str] = {}
    compiled: dict[str, float] = {}  # compile seconds spent now, charged to the first user
    for arm in arms:
        if arm.enforced and arm.schema not in compiled:
            try:
                compiled[arm.schema] = engine.compile(item.schemas[arm.schema])[1]  # type: ignore[index]
            except UnsupportedSchema as e:
                unsupported[arm.schema] = str(e)  # type: ignore[index]
                compiled[arm.schema] = 0.0  # type: ignore[index]
    if unsupported:
        recs = {a.key: ArmRecord(unsupported_schema=unsupported.get(a.schema or "")
                                 if a.enforced else None) for a in arms}
        return ItemRecord(id=item.id, arms=recs, item_seconds=0.0,
                          prompt_hash=prompt_hash(task, item, arms))
    out: dict[str, ArmRecord] = {}
    keys = {a.key for a in arms}
    free_text: str | None = None
    order = sorted(arms, key=lambda a: {"unconstrained": 0, "reason_then_constrain": 1}.get(a.kind, 2))
    for arm in order:
        if arm.kind == "reason_then_constrain" and free_text is None:
            free = engine.generate(task.messages(item, Arm("unconstrained", None)), None,
                                   cfg.arms.max_tokens.free)
            free_text = free.text
        msgs = task.messages(item, arm, free_text=free_text)
        schema = item.schemas[arm.schema] if arm.enforced else None  # type: ignore[index]
        gen = engine.generate(msgs, schema, _cap(cfg, arm))
        if schema is not None and (arm.kind == "constrained" or
                                   f"constrained[{arm.schema}]" not in keys):
            gen = gen.model_copy(update={"compile_seconds": compiled.pop(arm.schema, 0.0)})
        if arm.kind == "unconstrained":
            free_text = gen.text
        out[arm.key] = _record(gen, "unconstrained" if arm.kind == "reason_then_constrain" else None)
    return ItemRecord(id=item.id, arms={a.key: out[a.key] for a in arms},
                      item_seconds=round(time.perf_counter() - start, 3),
                      prompt_hash=prompt_hash(task, item, arms))


def _shown(value: Any) -> str:
    return repr(value.model_dump(mode="json") if isinstance(value, BaseModel) else value)


def _check_resume(path: Path, planned: ReplayHeader, task: Task, items: list[Item],
                  arms: list[Arm], allow_mismatch: bool) -> set[str]:
    """Ids already done in a compatible replay; anything else about it is refused."""
    old = read_replay(path)
    if old.header.version < 1:
        raise ReplayError(f"{path}: a validbutwrong 0.1 replay cannot be resumed")
    for key in _RESUME_KEYS:
        was, wanted = getattr(old.header, key), getattr(planned, key)
        if was != wanted:
            raise ReplayError(f"{path}: cannot resume: meta.{key} is {_shown(was)}, "
                              f"this run has {_shown(wanted)}")
    if old.header.task_hash != planned.task_hash and not allow_mismatch:
        raise ReplayError(f"{path}: cannot resume: the task definition changed since this "
                          "replay was started (meta.task_hash differs); pass "
                          "allow_task_mismatch=true to continue anyway")
    hashes = {it.id: prompt_hash(task, it, arms) for it in items}
    for rec in old.records:
        if rec.id in hashes and rec.prompt_hash != hashes[rec.id] and not allow_mismatch:
            raise ReplayError(f"{path}: cannot resume: item {rec.id}'s prompts differ from "
                              "the current task's; pass allow_task_mismatch=true to continue")
    return {r.id for r in old.records}


def prepare(model: ModelConfig) -> ModelFile:
    """What a live run needs before it may start: the live extra, and the model file found
    and hashed. Raises EngineError with the remedy (a missing extra, an offline hub)."""
    try:
        import llama_cpp  # noqa: F401  (the run loads it next anyway)
    except ImportError as e:
        raise EngineError(f"the live extra is not installed ({one_line(e)}); "
                          f"{LIVE_EXTRA_HINT}") from None
    return resolve_model(model)


def _planned(task: Task, cfg: RunConfig, n: int, arms: list[Arm],
             mf: ModelFile) -> ReplayHeader:
    """The header fields this run's configuration fixes before anything is loaded."""
    return ReplayHeader(
        format=FORMAT, task=task.name, task_hash=task.generation_hash(), n=n,
        engine=cfg.engine.name, arms=[a.key for a in arms],
        model=ModelInfo(name=cfg.model.name, file=mf.file, sha256=mf.sha256,
                        source=_source(cfg, mf)),
        decoding={"strategy": "greedy", "seed": DEFAULT_SEED, **SAMPLING,
                  "n_ctx": cfg.engine.n_ctx},
        max_tokens=cfg.arms.max_tokens.model_dump(by_alias=True),
        kv_reuse=cfg.engine.kv_reuse)


def generate(task: Task, items: list[Item], cfg: RunConfig, out_dir: Path, mf: ModelFile,
             err: TextIO) -> Path:
    """Run the canary, then generate (or resume) a replay of `items` with the model file
    from `prepare`; return its path."""
    if cfg.replay is not None:
        path = Path(cfg.replay).expanduser().resolve()
    else:
        path = out_dir / "replay.jsonl"
    if cfg.resume and not path.is_file():
        raise ReplayError(f"resume=true: no replay to resume at {path} (pass replay=PATH)")
    if not cfg.resume and path.exists():
        raise ReplayError(f"{path} exists; pass resume=true to continue it, or another replay=")
    arms = task_arms(task.schema_names, task.spec.answer_schema, cfg.arms.kinds)
    planned = _planned(task, cfg, len(items), arms, mf)
    done: set[str] = set()
    if cfg.resume:  # refuse an incompatible replay before paying for model load and canary
        done = _check_resume(path, planned, task, items, arms, cfg.allow_task_mismatch)
    load_start = time.perf_counter()
    runtime = Runtime(mf.path, n_ctx=cfg.engine.n_ctx, n_threads=cfg.threads,
                      seed=DEFAULT_SEED, reuse_kv=cfg.engine.kv_reuse)
    load_seconds = time.perf_counter() - load_start
    engine = make_engine(cfg.engine.name, runtime)
    canary = run_canary(engine)  # raises EngineError: the run refuses
    runtime.clear_kv()
    header = CompleteHeader.model_validate({
        **planned.model_dump(mode="json"), "versions": versions(),
        "hardware": hardware(runtime.n_threads),
        "canary_seconds": {cfg.engine.name: round(canary, 3)}, "started": now(),
        "load_seconds": round(load_seconds, 3)})
    writer = ReplayWriter(path)
    if cfg.resume:
        writer.resume()
    else:
        writer.start(header)
    todo = [it for it in items if it.id not in done]
    print(f"vbw: live {task.name}: {len(todo)} item(s) to generate ({len(done)} already in "
          f"{path}), engine {cfg.engine.name}, canary passed in {canary:.2f} s", file=err)
    bar = Progress(len(items), len(items) - len(todo), task.name, cfg.progress, err)
    wall = time.perf_counter()
    try:
        for item in todo:
            writer.append(generate_item(task, item, arms, engine, cfg))
            bar.advance()
    except EngineError as e:
        raise EngineError(f"{e} (item {item.id}; {path} keeps the finished items, "
                          "resume=true continues)") from None
    finally:
        bar.close()
    # every id already in the file plus every item appended now: no need to re-read it
    writer.finish(EndV1(ended=now(), wall_seconds=round(time.perf_counter() - wall, 1),
                        items=len(done) + len(todo)))
    return path
