"""mode=merge: the shard replays named by `replays=[...]` become one replay, then scored.

An entry of `replays` is a replay file, or a folder: a run folder holding `replay.jsonl`,
or a sweep folder whose job folders hold one each (folders named `merged*`, where a sweep
writes its merges, are skipped). The merged replay is written to the run folder as
`replay.jsonl`; its report is the one the run done in one job would have.

Merging is per-item work, done on two cores. The shards' checked first read
(vbw.replay.merge.read_shard) reads every other shard in a forked worker
(vbw.score.split.in_two); an error in either process reads them again in one, for the
first error in the order given. Writing the merged replay (each line decoded, its prompt
hash checked against the task's, dumped again): a forked worker makes the odd shards'
lines while this process makes the even ones', and this process writes every line in
task order, reading the worker's from a pipe as they come (neither holds more than a
pipe's worth). Any error, in either process, or a failed worker, writes the replay
again in one process, which refuses with the first error in task order, as before (a
valid merge never pays that pass). Two processes where vbw.score.split would score a
replay the size of the first shard in two (VBW_SCORING_PROCESSES=1 never, =2 always).

`merge_and_score` also scores the records as each process makes their lines (a pass of
vbw.score.written each, the worker's sent after its lines), so mode=merge does not read
back the replay it has just written; a pass that fails is dropped (`_Feed`), never the
write.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from vbw.errors import ReplayError
from vbw.pipes import fork, leave, stop
from vbw.replay.format import EndV1
from vbw.replay.header import CompleteHeader
from vbw.replay.joined import joined
from vbw.replay.merge import (Shard, item_line, merge_shards, read_shard,
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
                  paths: list[str], check: bool,
                  positions: Iterable[int] | None = None
                  ) -> Iterator[tuple[int, dict[str, Any], bool, Item | None]]:
    """The records, each checked as it passes: its recorded prompt_hash is the one the
    task gives it now, so no shard was generated from other prompts. Checked (`check`)
    when the shards' task hash is the task's (a changed task is the task-hash check's to
    refuse, or allow, when the merge is scored). `records` come in `ids` order (task
    order), so the item named is the first in task order, as when every item was built
    at once; `positions` are their indexes in `ids` (every one, if not given). Each comes
    with its index, whether orjson may write it (vbw.replay.joined.dumped) and its item,
    if the check built it."""
    arms = [parse_arm(k) for k in header.arms or []]
    for k, (shard, rec, alike) in zip(range(len(ids)) if positions is None else positions,
                                      records):
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

    def add(self, k: int, rec: dict[str, Any], item: Item | None) -> None:
        if self.written is not None:
            try:
                self.written.add(rec, k + 2, item)  # line k + 2: the header is line 1
            except Exception:  # noqa: BLE001
                self.written = None

    def merge(self, sent: bytes) -> None:
        """Add the pass a forked writer `sent` (pickled; None: its pass failed)."""
        try:
            found = pickle.loads(sent)  # from this run's own forked worker
            if found is None or self.written is None:
                self.written = None
            else:
                self.written.merge(found)
        except Exception:  # noqa: BLE001
            self.written = None

    def finished(self, end: EndV1) -> Written | None:
        """The pass over every record written, `end` the end line; None if it failed."""
        if self.written is not None:
            try:
                self.written.finish(end)
            except Exception:  # noqa: BLE001
                self.written = None
        return self.written


def _lines(task: Task, header: CompleteHeader, ids: list[str], paths: list[str],
           check: bool, shards: set[int] | None = None, *,
           feed: _Feed | None = None) -> Iterator[bytes]:
    """The merged replay's item lines in task order (of `shards` only, if given), each
    record handed to `feed` as its line is made."""
    count = len(paths)
    positions = None if shards is None else (k for k in range(len(ids)) if k % count in shards)
    records = joined([Path(p) for p in paths], ids, shards)
    for k, rec, alike, item in _same_prompts(task, header, ids, records, paths, check,
                                             positions):
        if feed is not None:
            feed.add(k, rec, item)
        yield item_line(rec, alike)


class _Fallback(Exception):
    """The two-process write failed (an error in either process): write in one."""


_STATE = b"\x00state\n"  # after a worker's lines (JSON objects): its scoring pass follows


def _two_processes(task: Task, header: CompleteHeader, ids: list[str], paths: list[str],
                   check: bool, feed: _Feed | None = None) -> Iterator[bytes]:
    """_lines of every shard, the odd ones made by a forked worker (module docstring);
    _Fallback on any error or a failed worker (which is then stopped). With `feed`, each
    process scores the records it makes, and the worker's pass is merged into it."""
    count = len(paths)
    even = set(range(0, count, 2))
    read, write = os.pipe()
    pid = fork()
    if pid == 0:  # the worker: its lines down the pipe, then leave (vbw.pipes.leave)
        status = 1
        try:
            os.close(read)
            with open(write, "wb", buffering=1 << 16) as out:
                for line in _lines(task, header, ids, paths, check,
                                   set(range(1, count, 2)), feed=feed):
                    out.write(line)
                if feed is not None:
                    out.write(_STATE)
                    out.write(pickle.dumps(feed.written and feed.written.state(),
                                           protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        except BaseException:  # noqa: BLE001 (the parent writes in one process)
            pass
        finally:
            leave(status)
    os.close(write)
    done = False
    try:
        with open(read, "rb", buffering=1 << 16) as theirs:
            mine = _lines(task, header, ids, paths, check, even, feed=feed)
            for k in range(len(ids)):
                line = next(mine) if k % count in even else theirs.readline()
                if not line.endswith(b"\n"):
                    raise _Fallback
                yield line
            if theirs.readline() != (b"" if feed is None else _STATE):
                raise _Fallback
            if feed is not None:
                feed.merge(theirs.read())
        _, status = os.waitpid(pid, 0)
        done = True
        if os.waitstatus_to_exitcode(status) != 0:
            raise _Fallback
    except (_Fallback, StopIteration):
        raise _Fallback from None
    except Exception as e:  # noqa: BLE001 - the one-process write says which error is first
        raise _Fallback from e
    finally:
        if not done:
            stop(pid)


def _read_shards(paths: list[Path]) -> list[Shard]:
    """read_shard of each path, every other one in a forked worker (vbw.score.split's
    fork and pipe, where it would split); an error in either process or a failed worker
    reads them again in one, for the first error in the order given."""
    if len(paths) > 1 and split.wanted(paths[0]):
        both = split.in_two(lambda: [read_shard(p) for p in paths[0::2]],
                            lambda: [read_shard(p) for p in paths[1::2]])
        if both is not None:
            out: list[Shard] = [*paths]  # type: ignore[list-item]  (each replaced)
            out[0::2], out[1::2] = both
            return out
    return [read_shard(p) for p in paths]


def merged_replay(task: Task, entries: list[str] | None, n: int | None, cwd: Path,
                  out_dir: Path) -> Path:
    """Merge the shards into out_dir/replay.jsonl; return its path (see `merge_and_score`)."""
    return merge_and_score(task, entries, n, cwd, out_dir)[0]


def merge_and_score(task: Task, entries: list[str] | None, n: int | None, cwd: Path,
                    out_dir: Path, scoring: Callable[[int], Written] | None = None
                    ) -> tuple[Path, Written | None]:
    """Merge the shards into out_dir/replay.jsonl; return its path. `n`, if given, must
    be the run's (the shards record how many items the whole run selected). Each shard is
    read through twice, never held (vbw.replay.merge). `scoring(n)`: a pass for a run of
    n items, given every record as it is written (vbw.score.written), returned beside
    the path if nothing went wrong on the way (else None: score the file)."""
    replays = _read_shards(shard_paths(entries, cwd))
    merge = merge_shards(replays, lambda of: task.ids(of))
    header = merge.header
    if n is not None and n != header.n:
        raise ReplayError(f"n={n}, but the shards are of a run of {header.n} item(s); "
                          f"pass n={header.n} or leave n out")
    paths = [merge.shards[i].path for i in sorted(merge.shards)]
    check = header.task_hash == task.generation_hash()
    path = out_dir / "replay.jsonl"
    if path.resolve() in {Path(r.path).resolve() for r in replays}:
        for _ in _lines(task, header, merge.ids, paths, check):
            pass  # a shard of other prompts is the first refusal, as it was
        raise ReplayError(f"{path}: the merged replay would overwrite a shard; give the "
                          "merge its own hydra.run.dir")

    def feed() -> _Feed | None:  # a fresh pass for each attempt at writing
        return None if scoring is None else _Feed(scoring(header.n))

    if len(paths) > 1 and split.wanted(Path(paths[0])):
        two = feed()
        try:
            write_merged_lines(path, header, _two_processes(task, header, merge.ids, paths,
                                                            check, two), merge.end)
            return path, None if two is None else two.finished(merge.end)
        except _Fallback:
            pass
    one = feed()
    write_merged_lines(path, header, _lines(task, header, merge.ids, paths, check, feed=one),
                       merge.end)
    return path, None if one is None else one.finished(merge.end)
