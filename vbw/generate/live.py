"""Live generation: one backend, a task's items through every arm, appended to a replay.

The run refuses an incompatible replay before paying for the model, proves with the
canary that the backend's constraint binds, then generates items (`concurrency` at a time
on a server) and appends each one whole, in item order, only once it is complete: a
killed run or a failed request loses only unfinished items, and `resume=true` continues.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

from vbw.config import BackendSettings, RunConfig, Shard
from vbw.errors import ConfigError, EngineError, ReplayError
from vbw.generate.backend import Backend
from vbw.generate.canary import run_canary, seed_probe
from vbw.generate.items import generate_item, prompt_hash
from vbw.generate.model import ModelFile
from vbw.generate.progress import Progress
from vbw.generate.crashguard import guarded, signal_name
from vbw.generate.providers import (Batching, crash_cause, native, open_backend, planned,
                                    sampled)
from vbw.generate.provenance import now, versions
from vbw.generate.sampling import request_sampling
from vbw.report.provenance import SEED_CLAUSES
from vbw.replay import (FORMAT, SAMPLED_FORMAT, CompleteHeader, EndV1, ItemRecord, ReplayHeader,
                        ReplayWriter, ShardInfo, read_replay)
from vbw.task.arms import Arm
from vbw.task.runner import Item, Task

# header fields that must match for a resumed run to continue the same experiment
_RESUME_KEYS = ("task", "engine", "arms", "model", "decoding", "max_tokens", "kv_reuse",
                "whitespace", "repack", "batch", "flash_attn", "shard")


def _shown(value: Any) -> str:
    return repr(value.model_dump(mode="json") if isinstance(value, BaseModel) else value)


def _check_resume(path: Path, want: ReplayHeader, task: Task, items: list[Item],
                  arms: list[Arm], allow_mismatch: bool) -> set[str]:
    """Ids already done in a compatible replay; anything else about it is refused."""
    old = read_replay(path)
    if old.header.version < 1:
        raise ReplayError(f"{path}: a validbutwrong 0.1 replay cannot be resumed")
    for key in _RESUME_KEYS:
        was, wanted = getattr(old.header, key), getattr(want, key)
        if key == "repack" and was is None and wanted is not None:
            was = True  # an in-process replay from before the setting: llama.cpp's default
        if key == "batch":
            was, wanted = was or 1, wanted or 1  # absent: one sequence at a time
        if key == "flash_attn":
            was, wanted = bool(was), bool(wanted)  # absent: off (or no batch)
        if was != wanted:
            hint = {"batch": f"; pass batch.sequences={was}",
                    "flash_attn": f"; pass batch.flash_attn={str(was).lower()}"}.get(key, "")
            raise ReplayError(f"{path}: cannot resume: meta.{key} is {_shown(was)}, "
                              f"this run has {_shown(wanted)}{hint}")
    was_b, want_b = old.header.backend, want.backend
    if (was_b and was_b.identity()) != (want_b and want_b.identity()):
        raise ReplayError(f"{path}: cannot resume: meta.backend is {_shown(was_b)}, this "
                          f"run has {_shown(want_b)}")
    if old.header.task_hash != want.task_hash and not allow_mismatch:
        raise ReplayError(f"{path}: cannot resume: the task definition changed since this "
                          "replay was started (meta.task_hash differs); pass "
                          "allow_task_mismatch=true to continue anyway")
    hashes = {it.id: prompt_hash(task, it, arms) for it in items}
    for rec in old.records:
        if rec.id in hashes and rec.prompt_hash != hashes[rec.id] and not allow_mismatch:
            raise ReplayError(f"{path}: cannot resume: item {rec.id}'s prompts differ from "
                              "the current task's; pass allow_task_mismatch=true to continue")
    return {r.id for r in old.records}


def in_order(todo: list[Item], make: Callable[[Item], ItemRecord],
             concurrency: int) -> Iterator[ItemRecord]:
    """Records in item order, `concurrency` items in flight. On a failure the records that
    precede it are yielded first, then the error is raised naming its item."""
    if concurrency <= 1:
        for item in todo:
            yield _named(item, make)
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        pending: list[tuple[Item, Future[ItemRecord]]] = []
        queue = iter(todo)
        try:
            for item in queue:
                pending.append((item, pool.submit(make, item)))
                if len(pending) >= concurrency:
                    yield _result(*pending.pop(0))
            while pending:
                yield _result(*pending.pop(0))
        finally:
            for _, fut in pending:
                fut.cancel()


def items_in_flight(sequences: int, server: int = 1) -> int:
    """Items generated at once: a server's `concurrency`, or twice the sequences of an
    in-process batch (so completions wait to join it when one leaves)."""
    return max(server, 2 * sequences if sequences > 1 else 1)


def _named(item: Item, make: Callable[[Item], ItemRecord]) -> ItemRecord:
    try:
        return make(item)
    except EngineError as e:
        raise EngineError(f"item {item.id}: {e}") from None


def _result(item: Item, fut: Future[ItemRecord]) -> ItemRecord:
    return _named(item, lambda _: fut.result())


def _decoding(fields: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    """The header's decoding: the kind's greedy fields as they always were (so a greedy
    run's header is unchanged), or a sampled run's settings and seed over them (the kind
    refuses what it cannot honour)."""
    dec = dict(fields["decoding"])
    if not cfg.decoding.greedy:
        dec.update(sampled(cfg.backend, cfg.decoding), seed=cfg.decoding.seed)
    if cfg.decoding.samples > 1:
        dec["samples"] = cfg.decoding.samples
    return dec


def _planned_header(task: Task, cfg: RunConfig, n: int, arms: list[Arm],
                    mf: ModelFile | None, shard: ShardInfo | None = None) -> ReplayHeader:
    fields = planned(cfg.backend, cfg.model, cfg.engine, mf)
    fields["decoding"] = _decoding(fields, cfg)
    if shard is not None:
        fields["shard"] = shard
    if (sequences := cfg.batch.resolved(native(cfg.backend))) > 1:
        fields["batch"] = sequences
        fields["flash_attn"] = cfg.batch.flash_attn
    return ReplayHeader(format=FORMAT if cfg.decoding.samples == 1 else SAMPLED_FORMAT,
                        task=task.name, task_hash=task.generation_hash(), n=n,
                        arms=[a.key for a in arms],
                        max_tokens=cfg.arms.max_tokens.model_dump(by_alias=True), **fields)


def _replay_path(cfg: RunConfig, out_dir: Path) -> Path:
    path = Path(cfg.replay).expanduser().resolve() if cfg.replay else out_dir / "replay.jsonl"
    if cfg.resume and not path.is_file():
        raise ReplayError(f"resume=true: no replay to resume at {path} (pass replay=PATH)")
    if not cfg.resume and path.exists():
        raise ReplayError(f"{path} exists; pass resume=true to continue it, or another replay=")
    return path


def shard_items(items: list[Item], shard: Shard) -> tuple[list[Item], ShardInfo | None]:
    """This job's slice of the run's items (vbw.config.Shard: position mod count) and the
    header's record of it; the whole run when count is 1. An empty shard is refused."""
    if shard.count == 1:
        return items, None
    mine = shard.take(items)
    if not mine:
        raise ConfigError(f"shard.index={shard.index}: no item falls in shard {shard.index} "
                          f"of {shard.count} (the run selects {len(items)} item(s)); use "
                          f"shard.count={max(1, len(items))} or fewer")
    return mine, ShardInfo(index=shard.index, count=shard.count, of=len(items))


def _refuse_enforced(arms: list[Arm], can_constrain: bool, name: str) -> None:
    """A backend that cannot constrain runs no constrained arm: refused before anything
    starts, rather than a replay whose every item is excluded as unsupported."""
    enforced = [a.key for a in arms if a.enforced]
    if enforced and not can_constrain:
        raise ConfigError(f"backend {name!r} cannot constrain to a schema, so it cannot run "
                          f"{', '.join(enforced)}; select arms without them, e.g. "
                          "arms.kinds=[unconstrained,prompt_json]")


def _refuse_tools(arms: list[Arm], refused: str, name: str) -> None:
    """tool_call arms on a backend kind without native tool calling: refused at start, in
    one line saying why and where they do run; never generated as another arm."""
    tools = [a.key for a in arms if a.tool]
    if tools and refused:
        raise ConfigError(f"backend {name!r} cannot run {', '.join(tools)}: {refused}; run "
                          "tool_call arms through a server (backend=openai "
                          "backend.dialect=llama_cpp_python, docs/tutorials/servers.md), "
                          "or drop tool_call from arms.kinds")


def check_runnable(arms: list[Arm], backend: BackendSettings, sequences: int | None = None
                   ) -> None:
    """Refuse, at start (before a model is fetched or loaded), an arm the backend kind
    cannot run, and batch.sequences > 1 where nothing decodes in this process."""
    _refuse_enforced(arms, backend.can_constrain, backend.name)
    _refuse_tools(arms, backend.tools_refused, backend.name)
    if sequences is not None and sequences > 1 and not native(backend):
        raise ConfigError(f"batch.sequences={sequences}: backend {backend.name!r} decodes "
                          "in a server, not in this process; a server batches the requests "
                          "it has in flight (backend.concurrency)")


def generate(task: Task, items: list[Item], arms: list[Arm], cfg: RunConfig, out_dir: Path,
             mf: ModelFile | None, err: TextIO) -> Path:
    """Run the canary, then generate (or resume) a replay of `items` (this job's shard of
    them, with `shard.count` > 1) over the task's `arms`; return its path. `mf` comes from
    `providers.prepare`.
    A backend with native code generates in a child process (vbw.generate.crashguard), so
    that a crash of it ends the run in one line; the replay keeps the finished items."""
    items, shard = shard_items(items, cfg.shard)
    path = _replay_path(cfg, out_dir)
    check_runnable(arms, cfg.backend, cfg.batch.sequences)
    if cfg.decoding.greedy and (cut := cfg.decoding.truncations()):
        named = ", ".join(f"decoding.{k}={v}" for k, v in cut.items())
        print(f"vbw: note: {named} ignored: decoding.temperature=0 decodes greedily",
              file=err)
    if cfg.decoding.greedy and cfg.decoding.samples > 1:
        print(f"vbw: note: decoding.samples={cfg.decoding.samples} at decoding.temperature=0: "
              "every sample is the greedy answer", file=err)
    want = _planned_header(task, cfg, len(items), arms, mf, shard)
    done = _check_resume(path, want, task, items, arms, cfg.allow_task_mismatch) \
        if cfg.resume else set()  # refused before paying for a model load and the canary

    def work(mark: Callable[[str], None], out: TextIO) -> Path:
        mark("loading the model")
        opened = open_backend(cfg.backend, cfg.model, cfg.engine, mf, cfg.threads,
                              Batching(want.batch or 1, bool(want.flash_attn)))  # the header's
        backend = opened.backend
        try:
            return _run(task, items, arms, cfg, path, backend, want, done,
                        opened.load_seconds, opened.hardware, out, mark)
        finally:
            mark("closing the model")
            backend.close()

    if not native(cfg.backend):
        return work(lambda step: None, err)
    log = out_dir / "native.log"
    return guarded(work, err, log, lambda sig, step: _crashed(cfg, path, log, sig, step))


def _crashed(cfg: RunConfig, path: Path, log: Path, sig: int, step: str) -> str:
    """The one line of a native crash: where, which signal, the likely cause, what stays."""
    kept = (f"{path} keeps the finished items; resume=true continues" if path.is_file()
            else "no item was written")
    return (f"the native generation stack crashed with {signal_name(sig)} while {step}; "
            f"likely cause: {crash_cause(cfg.backend, cfg.model, sig)}; its messages are "
            f"in {log}; {kept}")


def _seeds(backend: Backend, cfg: RunConfig, task: Task, err: TextIO) -> str | None:
    """A sampled server run's seed probe (vbw.generate.canary.seed_probe), said on stderr
    unless the server honours seeds; None for a greedy run."""
    sampling = request_sampling(cfg.decoding, "vbw-seed-probe", "probe", 0)
    if sampling is None:
        return None
    verdict = seed_probe(backend, sampling)
    if verdict in SEED_CLAUSES:
        print(f"vbw: note: {task.name}: {SEED_CLAUSES[verdict]}", file=err)
    return verdict


def _run(task: Task, items: list[Item], arms: list[Arm], cfg: RunConfig, path: Path,
         backend: Backend, want: ReplayHeader, done: set[str], load: float,
         hardware: dict[str, Any], err: TextIO,
         mark: Callable[[str], None]) -> Path:
    # raises EngineError: the run refuses; a backend that cannot constrain has no canary
    # to pass, and runs no constrained arm (_refuse_enforced)
    mark("running the canary")
    canary = run_canary(backend, tools=any(a.tool for a in arms)) \
        if backend.can_constrain else None
    backend.clear_cache()
    extra = {"backend": {**want.backend.model_dump(), "server": backend.describe().get("server"),
                         "seed": _seeds(backend, cfg, task, err)}} if want.backend else {}
    header = CompleteHeader.model_validate({
        **want.model_dump(mode="json", exclude_none=True), **extra,
        "versions": versions((*cfg.backend.requires, *backend.requires)),
        "hardware": hardware,
        "canary_seconds": {backend.engine: round(canary, 3)} if canary is not None else {},
        "started": now(), "load_seconds": load})
    writer = ReplayWriter(path)
    if cfg.resume:
        writer.resume()
    else:
        writer.start(header)
    todo = [it for it in items if it.id not in done]
    part = f" (shard {want.shard.index} of {want.shard.count})" if want.shard else ""
    print(f"vbw: live {task.name}{part}: {len(todo)} item(s) to generate ({len(done)} already in "
          f"{path}), engine {backend.engine}, "
          + (f"canary passed in {canary:.2f} s" if canary is not None else
             "no canary: the backend cannot constrain (no constrained arm)"), file=err)
    concurrency = items_in_flight(backend.sequences, cfg.backend.in_flight)
    # the shard in every progress line: a sweep's shard jobs may share one stderr
    label = f"{task.name} [shard {want.shard.index} of {want.shard.count}]" if want.shard \
        else task.name
    bar = Progress(len(items), len(items) - len(todo), label, cfg.progress, err)
    wall = time.perf_counter()
    try:
        for record in in_order(todo, lambda it: generate_item(
                task, it, arms, backend, cfg.arms.max_tokens, mark, cfg.decoding),
                concurrency):
            writer.append(record)
            bar.advance()
    except EngineError as e:
        raise EngineError(f"{e} ({path} keeps the finished items; resume=true continues)") \
            from None
    finally:
        bar.close()
    writer.finish(EndV1(ended=now(), wall_seconds=round(time.perf_counter() - wall, 1),
                        items=len(done) + len(todo)))
    return path
