"""The merged replay's item lines, read from the shards in task order, one at a time.

The merge has checked every shard (vbw.replay.merge): item `ids[k]` is in shard
`k % count`, once. Here each shard is read again, line by line, all of them side by side,
so the whole run is never held: a shard written in task order (one job, no concurrency)
costs nothing to wait on; a line that arrives before its turn waits as its bytes.

Each line comes out as the merged replay has always written it: the ItemRecord model's
dump (its types, its field order, no nulls). A line vbw wrote is already in that shape,
and is passed on as decoded without a second validation when `_as_dumped` can tell: the
same plain types the model keeps unchanged (vbw.replay.stream's `_light` reasoning), keys
in the model's order, every defaulted field present, no null, finite numbers. Anything
else goes through the model, which gives what it always gave.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vbw.errors import ReplayError
from vbw.replay.format import ArmRecord, ItemRecord
from vbw.replay.stream import decode_exact

_ITEM_ORDER = tuple(ItemRecord.model_fields)
_ARM_ORDER = tuple(ArmRecord.model_fields)
# the types a dump holds, per field; a field not named here (interventions) is never
# passed on without the model
_ITEM_TYPES: dict[str, type] = {"id": str, "arms": dict, "item_seconds": float,
                                "prompt_hash": str}
_ARM_TYPES: dict[str, type] = {"text": str, "seconds": float, "compile_seconds": float,
                               "n_tokens": int, "ttft_seconds": float, "finish_reason": str,
                               "reuses": str, "unsupported_schema": str, "redacted": bool}
_ARM_DEFAULTED = tuple(k for k, f in ArmRecord.model_fields.items() if f.default is not None)
_FINISH = ("stop", "length")


def _plain(obj: dict[str, Any], types: dict[str, type], order: tuple[str, ...]) -> bool:
    """Every key known, of exactly its type (never null, floats finite), in `order`."""
    for k, v in obj.items():
        t = types.get(k)
        if t is None or type(v) is not t or (t is float and not math.isfinite(v)):
            return False
    return list(obj) == [k for k in order if k in obj]


def _arm_dumped(a: Any) -> bool:
    return (type(a) is dict and _plain(a, _ARM_TYPES, _ARM_ORDER)
            and all(k in a for k in _ARM_DEFAULTED)
            and a.get("finish_reason", "stop") in _FINISH)


def as_dumped(obj: Any) -> dict[str, Any]:
    """The item line as `ItemRecord.model_validate(obj).model_dump(mode="json",
    exclude_none=True)` gives it (the line was checked by the merge's first read)."""
    if (type(obj) is dict and _plain(obj, _ITEM_TYPES, _ITEM_ORDER) and "arms" in obj
            and all(_arm_dumped(a) for a in obj["arms"].values())):
        return obj
    return ItemRecord.model_validate(obj).model_dump(mode="json", exclude_none=True)


def _item_lines(path: Path) -> Iterator[tuple[str, bytes, Any]]:
    """(id, line, decoded line) per item line of a checked replay: the header, the end
    line and a torn last line (which the checked read ignored) are skipped."""
    with open(path, "rb") as f:
        lines = (line for line in f if line and not line.isspace())
        next(lines, None)  # the header
        for line in lines:
            try:
                obj = decode_exact(line)
            except ValueError:  # only a torn last line: every other line decoded before
                return
            if isinstance(obj, dict) and set(obj) != {"end"}:
                yield obj["id"], line, obj


def joined(paths: list[Path], ids: list[str],
           shards: set[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(shard index, dumped record) for every id in `ids` order; `ids[k]` is read from
    `paths[k % len(paths)]`. With `shards`, only the ids of those shards (whose files
    alone are read: another process joins the others, vbw.sweep.shards)."""
    readers = [_item_lines(p) for p in paths]
    waiting: dict[str, bytes] = {}
    try:
        for k, item_id in enumerate(ids):
            i = k % len(paths)
            if shards is not None and i not in shards:
                continue
            obj = None
            line = waiting.pop(item_id, None)
            if line is not None:
                obj = decode_exact(line)
            else:
                for got, raw, decoded in readers[i]:
                    if got == item_id:
                        obj = decoded  # in its turn: decoded once
                        break
                    waiting[got] = raw  # early: waits as its bytes, decoded again
            if obj is None:
                raise ReplayError(f"{paths[i]}: item {item_id} is gone since it "
                                        "was checked")
            yield i, as_dumped(obj)
    finally:
        for r in readers:
            r.close()
