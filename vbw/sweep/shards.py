"""mode=merge: the shard replays named by `replays=[...]` become one replay, then scored.

An entry of `replays` is a replay file, or a folder: a run folder holding `replay.jsonl`,
or a sweep folder whose job folders hold one each (folders named `merged*`, where a sweep
writes its merges, are skipped). The merged replay is written to the run folder as
`replay.jsonl`; its report is the one the run done in one job would have.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vbw.errors import ReplayError
from vbw.replay.header import CompleteHeader
from vbw.replay.joined import joined
from vbw.replay.merge import merge_shards, read_shard, write_merged
from vbw.task.arms import parse_arm
from vbw.task.runner import Task

MERGED_PREFIX = "merged"


def _entry(entry: str, cwd: Path) -> list[Path]:
    p = Path(entry).expanduser()
    p = p if p.is_absolute() else cwd / p
    if not p.is_dir():
        return [p]
    if (p / "replay.jsonl").is_file():
        return [p / "replay.jsonl"]
    found = sorted((q for q in p.glob("*/replay.jsonl")
                    if not q.parent.name.startswith(MERGED_PREFIX)),
                   key=lambda q: (len(q.parent.name), q.parent.name))
    if not found:
        raise ReplayError(f"replays: {entry}: no replay.jsonl in this folder or its "
                          "sub-folders")
    return found


def shard_paths(entries: list[str] | None, cwd: Path) -> list[Path]:
    """Every replay file the entries name, in the order given, each once."""
    if not entries:
        raise ReplayError("mode=merge needs replays=[...]: the shard replays (files, run "
                          "folders or a sweep folder), e.g. 'replays=[vbw-runs/multirun/x]'")
    out: list[Path] = []
    for e in entries:
        for p in _entry(e, cwd):
            if p.resolve() not in {q.resolve() for q in out}:
                out.append(p)
    return out


def _same_prompts(task: Task, header: CompleteHeader, ids: list[str],
                  records: Iterator[tuple[int, dict[str, Any]]],
                  paths: list[str]) -> Iterator[dict[str, Any]]:
    """The records, each checked as it passes: its recorded prompt_hash is the one the
    task gives it now, so no shard was generated from other prompts. Checked when the
    shards' task hash is the task's (a changed task is the task-hash check's to refuse, or
    allow, when the merge is scored). `records` come in `ids` order (task order), so the
    item named is the first in task order, as when every item was built at once."""
    check = header.task_hash == task.generation_hash()
    arms = [parse_arm(k) for k in header.arms or []]
    for k, (shard, rec) in enumerate(records):
        if check and rec.get("prompt_hash") is not None:
            want = task.prompt_hash(task.item(k, ids[k]), arms)
            if rec["prompt_hash"] != want:
                raise ReplayError(f"{paths[shard]}: item {ids[k]}: prompt_hash is "
                                  f"{rec['prompt_hash'][:16]}..., the task's prompts hash "
                                  f"to {want[:16]}...: the shard was generated from other "
                                  "prompts and cannot be merged")
        yield rec


def merged_replay(task: Task, entries: list[str] | None, n: int | None, cwd: Path,
                  out_dir: Path) -> Path:
    """Merge the shards into out_dir/replay.jsonl; return its path. `n`, if given, must
    be the run's (the shards record how many items the whole run selected). Each shard is
    read through twice, never held (vbw.replay.merge)."""
    replays = [read_shard(p) for p in shard_paths(entries, cwd)]
    merge = merge_shards(replays, lambda of: task.ids(of))
    header = merge.header
    if n is not None and n != header.n:
        raise ReplayError(f"n={n}, but the shards are of a run of {header.n} item(s); "
                          f"pass n={header.n} or leave n out")
    paths = [merge.shards[i].path for i in sorted(merge.shards)]
    records = _same_prompts(task, header, merge.ids,
                            joined([Path(p) for p in paths], merge.ids), paths)
    path = out_dir / "replay.jsonl"
    if path.resolve() in {Path(r.path).resolve() for r in replays}:
        for _ in records:  # a shard of other prompts is the first refusal, as it was
            pass
        raise ReplayError(f"{path}: the merged replay would overwrite a shard; give the "
                          "merge its own hydra.run.dir")
    write_merged(path, header, records, merge.end)
    return path
