"""mode=merge's work: the shard replays named by `replays=[...]` become one replay, scored
as it is written.

An entry of `replays` is a replay file, or a folder: a run folder holding `replay.jsonl`,
or a sweep folder whose job folders hold one each (folders named `merged*`, where a sweep
writes its merges, are skipped). Each shard is read and checked (vbw.modes.merge.shards;
several at once on several cores, vbw.parallel), then the merged replay is written line by
line in task order (vbw.modes.merge.joined), each record checked against the task's prompt
hash and handed to a scoring pass (vbw.score.written), so the written file is not read back;
a pass that fails is dropped (`_Feed`), never the write.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from vbw import parallel
from vbw.errors import ReplayError
from vbw.replay.format import EndV1
from vbw.replay.header import CompleteHeader
from vbw.modes.merge.joined import joined
from vbw.modes.merge.shards import (Shard, item_line, merge_shards, read_shard,
                                    write_merged_lines)
from vbw.score import split
from vbw.score.written import Written
from vbw.task.arms import parse_arm
from vbw.task.runner import Item, Task

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
                  records: Iterator[tuple[int, dict[str, Any], bool]],
                  paths: list[str], check: bool, start: int = 0
                  ) -> Iterator[tuple[int, dict[str, Any], bool, Item | None]]:
    """The records, each checked as it passes: its recorded prompt_hash is the one the
    task gives it now, so no shard was generated from other prompts. Checked (`check`)
    when the shards' task hash is the task's (a changed task is the task-hash check's to
    refuse, or allow, when the merge is scored). `records` come in `ids` order (task
    order), so the item named is the first in task order, as when every item was built
    at once. Each comes with its index, whether orjson may write it (joined.dumped) and
    its item, if the check built it; the first record is item `start`'s."""
    arms = [parse_arm(k) for k in header.arms or []]
    for k, (shard, rec, alike) in enumerate(records, start):
        item = None
        if check and rec.get("prompt_hash") is not None:
            item = task.item(k, ids[k])
            want = task.prompt_hash(item, arms)
            if rec["prompt_hash"] != want:
                raise ReplayError(f"{paths[shard]}: item {ids[k]}: prompt_hash is "
                                  f"{rec['prompt_hash'][:16]}..., the task's prompts hash "
                                  f"to {want[:16]}...: the shard was generated from other "
                                  "prompts and cannot be merged")
        yield k, rec, alike, item


class _Feed:
    """The records written, handed to a scoring pass (vbw.score.written) if there is one;
    one that fails in any way is dropped (the merged replay is then scored by reading
    it), the writing goes on."""

    def __init__(self, written: Written | None) -> None:
        self.written = written

    def _try(self, step: Callable[[Written], Any]) -> None:
        if self.written is not None:
            try:
                step(self.written)
            except Exception:  # noqa: BLE001
                self.written = None

    def add(self, k: int, rec: dict[str, Any], item: Item | None) -> None:
        self._try(lambda w: w.add(rec, k + 2, item))  # line k + 2: the header is line 1

    def merge(self, state: dict[str, Any] | None) -> None:
        """Add what another pass over other records gathered (None: that pass failed)."""
        if state is None:
            self.written = None
        self._try(lambda w: w.merge(state))

    def finished(self, end: EndV1) -> Written | None:
        """The pass over every record written, `end` the end line; None if it failed."""
        self._try(lambda w: w.finish(end))
        return self.written


Span = tuple[int, int]  # items [start, stop) in task order


def _lines(task: Task, header: CompleteHeader, ids: list[str], paths: list[str],
           check: bool, span: Span, feed: _Feed | None = None) -> Iterator[bytes]:
    """The merged replay's item lines of the items in `span`, in task order, each record
    handed to `feed` as its line is made."""
    records = joined([Path(p) for p in paths], ids, *span)
    for k, rec, alike, item in _same_prompts(task, header, ids, records, paths, check,
                                             span[0]):
        if feed is not None:
            feed.add(k, rec, item)
        yield item_line(rec, alike)


def _read_shards(paths: list[Path], procs: int) -> list[Shard]:
    """read_shard of each path, in `procs` processes; the first error in the order given
    is raised."""
    return parallel.ordered(lambda path, *_: read_shard(path), paths, procs)


def _chunks(parts: list[Path]) -> Iterator[bytes]:
    for part in parts:
        with open(part, "rb") as f:
            while chunk := f.read(1 << 20):
                yield chunk


def merged_replay(task: Task, entries: list[str] | None, n: int | None, cwd: Path,
                  out_dir: Path) -> Path:
    """Merge the shards into out_dir/replay.jsonl; return its path (see `merge_and_score`)."""
    return merge_and_score(task, entries, n, cwd, out_dir)[0]


def merge_and_score(task: Task, entries: list[str] | None, n: int | None, cwd: Path,
                    out_dir: Path, scoring: Callable[[int], Written] | None = None
                    ) -> tuple[Path, Written | None]:
    """Merge the shards into out_dir/replay.jsonl; return its path. `n`, if given, must
    be the run's (the shards record how many items the whole run selected). Each shard is
    read through twice, never held (vbw.modes.merge.shards). `scoring(n)`: a pass for a run of
    n items, given every record as it is written (vbw.score.written), returned beside
    the path if nothing went wrong on the way (else None: score the file). Where scoring
    would split, the items are cut into one run per process (vbw.parallel.ordered), each
    making its lines into a part file and scoring them into its own pass."""
    given = shard_paths(entries, cwd)
    procs = parallel.count() if split.wanted(given[0]) else 1  # where scoring would split
    replays = _read_shards(given, procs)
    merge = merge_shards(replays, lambda of: task.ids(of))
    header = merge.header
    if n is not None and n != header.n:
        raise ReplayError(f"n={n}, but the shards are of a run of {header.n} item(s); "
                          f"pass n={header.n} or leave n out")
    paths = [merge.shards[i].path for i in sorted(merge.shards)]
    check = header.task_hash == task.generation_hash()
    path, ids = out_dir / "replay.jsonl", merge.ids
    if path.resolve() in {Path(r.path).resolve() for r in replays}:
        for _ in _lines(task, header, ids, paths, check, (0, len(ids))):
            pass  # a shard of other prompts is the first refusal, as it was
        raise ReplayError(f"{path}: the merged replay would overwrite a shard; give the "
                          "merge its own hydra.run.dir")
    procs = min(procs, max(len(ids), 1))
    cuts = [len(ids) * i // procs for i in range(procs + 1)]
    parent = os.getpid()
    parts = [path.with_name(f".{path.name}.part{i}-{parent}") for i in range(procs)]
    path.parent.mkdir(parents=True, exist_ok=True)
    here: dict[int, _Feed] = {}  # the passes of the runs made in this process

    def part(i: int, *_: Any) -> dict[str, Any] | None:
        feed = _Feed(None if scoring is None else scoring(header.n))
        with open(parts[i], "wb") as f:
            for line in _lines(task, header, ids, paths, check, (cuts[i], cuts[i + 1]), feed):
                f.write(line)
        if os.getpid() == parent:
            here[i] = feed
            return None
        return None if feed.written is None else feed.written.state()

    try:
        states = parallel.ordered(part, range(procs), procs)
        write_merged_lines(path, header, _chunks(parts), merge.end)
    finally:
        for p in parts:
            p.unlink(missing_ok=True)
    if scoring is None:
        return path, None
    whole = here[0]  # the first run's pass (always made here) takes in the others'
    for i in range(1, procs):
        mine = here[i].written if i in here else None
        whole.merge(states[i] if i not in here else mine and mine.state())
    return path, whole.finished(merge.end)
