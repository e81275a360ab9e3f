"""Joining the shard replays of one live run into the replay of the whole run.

How it works and why: docs/design.md, section vbw.modes.merge.shards.
"""

from __future__ import annotations

import json
import os
import reprlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from vbw.errors import ReplayError
from vbw.redact import escape_surrogates
from vbw.replay.format import EndV1, ItemRecord
from vbw.replay.header import CompleteHeader, ReplayHeader, ShardInfo
from vbw.replay.io import legacy_end
from vbw.replay.stream import open_replay
from vbw.task.jsontext.values import json_text

# what decides the texts: shards that differ in any of these are not one run
GENERATION_KEYS = ("task", "task_hash", "engine", "arms", "model", "decoding", "max_tokens",
                   "kv_reuse", "whitespace", "repack", "batch", "flash_attn")
# the software that decodes (meta.versions): another version may decode other texts
GENERATING_PACKAGES = ("vbw", "llama-cpp-python", "outlines", "outlines-core", "llguidance")

_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxdict = 80, 80, 6


class Shard(NamedTuple):
    """What the merge keeps of a shard replay after its checked read: never its texts."""

    path: str
    header: ReplayHeader
    meta_as_written: dict[str, Any]
    end: EndV1 | None
    ids: list[str]  # its items, in file order


def read_shard(path: Path) -> Shard:
    """Read every line of a shard with the replay reader's checks and one-line errors
    (vbw.replay.stream), keeping its header, end line and item ids."""
    stream = open_replay(path)
    ids = [rec.id for rec in stream.records()]
    end = stream.end
    if stream.header.version == 0 and end is None:
        end = legacy_end(stream.meta_as_written, len(ids))
    return Shard(str(path), stream.header, stream.meta_as_written, end, ids)


def _differ(key: str, a: Any, b: Any) -> tuple[str, Any, Any] | None:
    """The first field where a and b differ, as a dotted name with both values."""
    if a == b:
        return None
    a, b = (x.model_dump(mode="json") if hasattr(x, "model_dump") else x for x in (a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if a.get(k) != b.get(k):
                return f"{key}.{k}", a.get(k), b.get(k)
    return key, a, b


def _versions(header: Any) -> dict[str, Any]:
    return {k: v for k, v in (header.versions or {}).items() if k in GENERATING_PACKAGES}


def _shard(replay: Shard) -> ShardInfo:
    if replay.header.shard is None:
        raise ReplayError(f"{replay.path}: not a shard replay (no meta.shard); mode=merge "
                          "joins replays written with shard.count > 1")
    return replay.header.shard


def _same_run(replays: list[Shard]) -> tuple[int, int]:
    """(count, of) shared by every shard; a different configuration or split is refused."""
    first = replays[0]
    s0 = _shard(first)
    for r in replays[1:]:
        s = _shard(r)
        pairs = [(key, getattr(first.header, key), getattr(r.header, key))
                 for key in GENERATION_KEYS]
        pairs.append(("versions", _versions(first.header), _versions(r.header)))
        for key, a, b in pairs:
            diff = _differ(key, a, b)
            if diff is not None:
                name, va, vb = diff
                raise ReplayError(f"{r.path}: meta.{name} is {_short.repr(vb)}, "
                                  f"{first.path} has {_short.repr(va)}: the shards are not "
                                  "of one run and cannot be merged")
        ident = [x.backend.identity() if x.backend else None for x in (first.header, r.header)]
        if ident[0] != ident[1]:
            raise ReplayError(f"{r.path}: meta.backend differs from {first.path}'s: the "
                              "shards are not of one run and cannot be merged")
        if (s.count, s.of) != (s0.count, s0.of):
            raise ReplayError(f"{r.path}: meta.shard splits {s.of} item(s) {s.count} ways, "
                              f"{first.path} splits {s0.of} item(s) {s0.count} ways")
    return s0.count, s0.of


def _by_index(replays: list[Shard], count: int) -> dict[int, Shard]:
    """Each shard index exactly once, every shard finished."""
    seen: dict[int, Shard] = {}
    for r in replays:
        i = _shard(r).index
        if i in seen:
            raise ReplayError(f"shard {i} of {count} is given twice: {seen[i].path} and "
                              f"{r.path} (overlapping shards)")
        if r.end is None:
            raise ReplayError(f"{r.path}: shard {i} of {count} is unfinished (no end line); "
                              f"finish it with mode=live resume=true replay={r.path}")
        seen[i] = r
    missing = [i for i in range(count) if i not in seen]
    if missing:
        raise ReplayError(f"missing shard(s) {', '.join(map(str, missing))} of {count}: "
                          f"given {len(seen)} shard replay(s)")
    return seen


def _check_items(shards: dict[int, Shard], count: int, ids: list[str]) -> None:
    """Each item in its own shard, once, none missing."""
    owner: dict[str, Shard] = {}
    for i, r in sorted(shards.items()):
        expected = set(ids[i::count])
        for rec_id in r.ids:
            if rec_id in owner:
                raise ReplayError(f"item {rec_id!r} is in both {owner[rec_id].path} and "
                                  f"{r.path} (overlapping shards)")
            if rec_id not in expected:
                raise ReplayError(f"{r.path}: item {rec_id!r} does not belong to shard {i} "
                                  f"of {count} of this task's selection")
            owner[rec_id] = r
    for i, r in sorted(shards.items()):
        lacking = [x for x in ids[i::count] if x not in owner]
        if lacking:
            more = f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""
            raise ReplayError(f"{r.path}: shard {i} of {count} lacks {len(lacking)} item(s): "
                              f"{', '.join(lacking[:3])}{more}")


def _header(shards: dict[int, Shard], of: int) -> CompleteHeader:
    """Shard 0's header for the whole run: no `shard`, n = every item, the earliest
    start, the longest load; where each part came from goes under notes."""
    heads = [shards[i].header for i in sorted(shards)]
    meta: dict[str, Any] = {k: v for k, v in shards[0].meta_as_written.items() if k != "shard"}
    meta["n"] = of
    starts = [h.started for h in heads if h.started]
    if starts:
        meta["started"] = min(starts)
    loads = [h.load_seconds for h in heads if h.load_seconds is not None]
    if loads:
        meta["load_seconds"] = max(loads)
    parts = [{"shard": i, "path": r.path, "started": r.header.started,
              "wall_seconds": r.end.wall_seconds if r.end else None}
             for i, r in sorted(shards.items())]
    meta["notes"] = {**(meta.get("notes") or {}), "merged_from": parts}
    return CompleteHeader.model_validate(meta)


class Merge(NamedTuple):
    """A checked merge: the whole run's header, its ids in task order, its end line, and
    the shards by index (item `ids[k]` is in shard `k % len(shards)`)."""

    header: CompleteHeader
    ids: list[str]
    end: EndV1
    shards: dict[int, Shard]


def merge_shards(replays: list[Shard], ids_of: Callable[[int], list[str]]) -> Merge:
    """Check that the shards make one run (see the module docstring). `ids_of(of)` gives
    the ids of the run's selection of `of` items, in task order."""
    if not replays:
        raise ReplayError("replays: no shard replay to merge (replays=[a.jsonl,b.jsonl] or "
                          "a sweep folder)")
    count, of = _same_run(replays)
    shards = _by_index(replays, count)
    ids = ids_of(of)
    if len(ids) != of:
        raise ReplayError(f"{replays[0].path}: the shards split {of} item(s), the task "
                          f"selects {len(ids)} now")
    _check_items(shards, count, ids)
    ends = [r.end for r in shards.values() if r.end is not None]
    end = EndV1(ended=max(e.ended for e in ends), items=of,
                wall_seconds=max(e.wall_seconds for e in ends))
    return Merge(_header(shards, of), ids, end, shards)


def _line(obj: dict[str, Any]) -> str:
    # a lone surrogate (which UTF-8 cannot encode; a shard may carry one as a \u escape)
    # is written as the same escape, so nothing is lost
    return escape_surrogates(json.dumps(obj, ensure_ascii=False)) + "\n"


def item_line(r: ItemRecord | dict[str, Any], spelled_alike: bool = False) -> bytes:
    """A merged replay's item line, as bytes: an ItemRecord or its dump
    (`model_dump(mode="json", exclude_none=True)`). `spelled_alike`: the dump holds only
    plain values (str keys; str, int, bool, None, dicts, lists) and floats that orjson
    spells as json does (vbw.modes.merge.joined.dumped), so orjson writes the line
    (vbw.task.jsontext.values.json_text: twice as fast as json on a 4 KB line; a lone
    surrogate or an integer beyond 64 bits still goes to json)."""
    if spelled_alike and isinstance(r, dict) and (text := json_text(r, False)) is not None:
        return text + b"\n"
    return _line(r if isinstance(r, dict)
                 else r.model_dump(mode="json", exclude_none=True)).encode("utf-8")


def write_merged(path: Path, header: CompleteHeader,
                 records: Iterable[ItemRecord | dict[str, Any]], end: EndV1) -> None:
    """The merged replay (see write_merged_lines), from its records (`item_line`)."""
    write_merged_lines(path, header, map(item_line, records), end)


def write_merged_lines(path: Path, header: CompleteHeader, lines: Iterable[bytes],
                       end: EndV1) -> None:
    """The merged replay, written line by line to a temporary name and renamed into
    place (removed if `lines` raises: a refused merge leaves nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(_line({"meta": header.as_written()}).encode("utf-8"))
            for line in lines:
                f.write(line)
            f.write(_line({"end": end.model_dump(mode="json")}).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
