"""The merged replay's item lines, read from the shards in task order, one at a time.

The merge has checked every shard (vbw.modes.merge.shards): item `ids[k]` is in shard
`k % count`, once. Here each shard is read again, line by line, all of them side by side,
so the whole run is never held: a shard written in task order (one job, no concurrency)
costs nothing to wait on; a line that arrives before its turn waits as its bytes.

How it works and why: docs/design.md, section vbw.modes.merge.joined.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vbw.errors import ReplayError
from vbw.replay.format import ArmRecord, ItemRecord
from vbw.replay.stream import decode_exact
from vbw.task.jsontext.values import SPELLED_ALIKE

_ITEM_ORDER = tuple(ItemRecord.model_fields)
_ARM_ORDER = tuple(ArmRecord.model_fields)
# the types a dump holds, per field; a field not named here (interventions) is never
# passed on without the model
_ITEM_TYPES: dict[str, type] = {"id": str, "arms": dict, "item_seconds": float,
                                "prompt_hash": str}
_ARM_TYPES: dict[str, type] = {"text": str, "seconds": float, "compile_seconds": float,
                               "n_tokens": int, "ttft_seconds": float, "finish_reason": str,
                               "reuses": str, "unsupported_schema": str, "redacted": bool}
_ARM_DEFAULTED = frozenset(k for k, f in ArmRecord.model_fields.items()
                           if f.default is not None)
_FINISH = ("stop", "length")

Signature = tuple[bool, tuple[str, ...], tuple[type, ...]]
_UNSEEN = object()
_signatures: dict[Signature, tuple[str, ...] | None] = {}
_MAX_SIGNATURES = 1024  # a replay of odd lines cannot grow it without bound


def _work_out(arm: bool, keys: tuple[str, ...], types: tuple[type, ...]) -> tuple[str, ...] | None:
    """The float fields of a dict with these keys and value types, if they are the dump's:
    every key known, of exactly its type (never null), in the model's order, and for an
    arm every defaulted field present; None otherwise."""
    known, order = (_ARM_TYPES, _ARM_ORDER) if arm else (_ITEM_TYPES, _ITEM_ORDER)
    if any(known.get(k) is not t for k, t in zip(keys, types)):
        return None
    if list(keys) != [k for k in order if k in keys] or (arm and not _ARM_DEFAULTED <= set(keys)):
        return None
    return tuple(k for k, t in zip(keys, types) if t is float)


def _floats(obj: dict[str, Any], arm: bool) -> tuple[str, ...] | None:
    """`_work_out` of the dict's keys and value types, worked out once per signature (the
    arms of a replay share a few)."""
    sig = (arm, tuple(obj), tuple(map(type, obj.values())))
    found = _signatures.get(sig, _UNSEEN)
    if found is _UNSEEN:
        found = _work_out(*sig)
        if len(_signatures) < _MAX_SIGNATURES:
            _signatures[sig] = found
    return found  # type: ignore[return-value]


def _finite(obj: dict[str, Any], floats: tuple[str, ...]) -> bool | None:
    """None if a float field is not finite (the model's dump differs); else whether
    every one is spelled by orjson as json spells it."""
    alike = True
    for k in floats:
        v = obj[k]
        if not math.isfinite(v):
            return None
        if v and abs(v) < SPELLED_ALIKE:
            alike = False
    return alike


def dumped(obj: Any) -> tuple[dict[str, Any], bool]:
    """The item line as `ItemRecord.model_validate(obj).model_dump(mode="json",
    exclude_none=True)` gives it (the line was checked by the merge's first read), and
    whether it is the decoded line itself with every float one orjson spells as json
    does (vbw.modes.merge.shards.item_line then writes it by orjson)."""
    if type(obj) is dict and "arms" in obj and (floats := _floats(obj, False)) is not None:
        alike = _finite(obj, floats)
        for a in obj["arms"].values() if alike is not None else ():
            if (type(a) is not dict or (floats := _floats(a, True)) is None
                    or a.get("finish_reason", "stop") not in _FINISH
                    or (arm_alike := _finite(a, floats)) is None):
                break
            alike = alike and arm_alike
        else:
            if alike is not None:
                return obj, alike
    return ItemRecord.model_validate(obj).model_dump(mode="json", exclude_none=True), False


def as_dumped(obj: Any) -> dict[str, Any]:
    """`dumped`'s dump."""
    return dumped(obj)[0]


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


def joined(paths: list[Path], ids: list[str], start: int = 0, stop: int | None = None
           ) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(shard index, dumped record, spelled alike: see `dumped`) for every id of
    `ids[start:stop]` in order; `ids[k]` is read from `paths[k % len(paths)]` (the lines
    before `start` are read past)."""
    readers = [_item_lines(p) for p in paths]
    waiting: dict[str, bytes] = {}
    try:
        for k, item_id in enumerate(ids[:stop]):
            i = k % len(paths)
            obj = None
            line = waiting.pop(item_id, None)
            if line is not None:
                obj = decode_exact(line) if k >= start else True
            else:
                for got, raw, decoded in readers[i]:
                    if got == item_id:
                        obj = decoded  # in its turn: decoded once
                        break
                    waiting[got] = raw  # early: waits as its bytes, decoded again
            if obj is None:
                raise ReplayError(f"{paths[i]}: item {item_id} is gone since it "
                                  "was checked")
            if k >= start:
                yield i, *dumped(obj)
    finally:
        for r in readers:
            r.close()
