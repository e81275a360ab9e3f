"""Reading, locating and appending replay files.

Writing is append-only: every completed item is one line, written whole, flushed and
fsynced, so a crash (even SIGKILL) loses at most the item in flight. A torn last line left
by a crash mid-write is ignored on read and cut off on resume.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from vbw.errors import ReplayError
from vbw.replay.format import EndV1, ItemRecord, Replay
from vbw.replay.header import FORMAT, CompleteHeader, ReplayHeader
from vbw.replay.legacy import LegacyHeader
from vbw.validation import describe


def read_replay(path: Path) -> Replay:
    """Parse and validate a replay; errors name the file, line and field."""
    if not path.is_file():
        raise ReplayError(f"replay file not found: {path}")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ReplayError(f"cannot read replay {path}: {e}") from None
    lines = raw.split(b"\n")
    torn = bool(lines and lines[-1].strip())  # no final newline: the last write was cut
    if torn:
        try:
            json.loads(lines[-1])
            torn = False
        except ValueError:
            lines = lines[:-1]
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        raise ReplayError(f"{path}: empty replay file")
    meta = _meta_line(path, lines[0])
    header: ReplayHeader = _model(ReplayHeader, meta, path, 1, "meta.")
    records, end = _items(path, lines[1:], header)
    if header.version == 0 and end is None:
        end = _legacy_end(meta, len(records))
    return Replay(path=str(path), header=header, meta_as_written=meta, records=records,
                  end=end, torn_tail=torn)


def _items(path: Path, lines: list[bytes],
           header: ReplayHeader) -> tuple[list[ItemRecord], EndV1 | None]:
    """Item lines (each id once, each arm one the header lists) and the end marker."""
    records: list[ItemRecord] = []
    end = None
    seen: set[str] = set()
    for lineno, line in enumerate(lines, 2):
        obj = _json_line(path, lineno, line)
        if isinstance(obj, dict) and set(obj) == {"end"}:
            end = _model(EndV1, obj["end"], path, lineno, "end.")
            continue
        rec = _model(ItemRecord, obj, path, lineno, "")
        if rec.id in seen:
            raise ReplayError(f"{path}:{lineno}: item id {rec.id!r} appears twice")
        unlisted = [k for k in rec.arms if header.arms is not None and k not in header.arms]
        if unlisted:
            raise ReplayError(f"{path}:{lineno}: arms.{unlisted[0]}: not an arm the header "
                              f"lists (meta.arms: {', '.join(header.arms or [])})")
        seen.add(rec.id)
        records.append(rec)
    return records, end


def _meta_line(path: Path, line: bytes) -> dict[str, Any]:
    head = _json_line(path, 1, line)
    if not isinstance(head, dict) or set(head) != {"meta"} or not isinstance(head["meta"], dict):
        raise ReplayError(f"{path}:1: first line must be {{\"meta\": {{...}}}} and nothing else")
    meta: dict[str, Any] = head["meta"]
    if "format" in meta and meta["format"] != FORMAT:
        raise ReplayError(f"{path}:1: meta.format {meta['format']!r} is not supported "
                          f"(this vbw reads {FORMAT!r} and validbutwrong 0.1 replays)")
    return meta


def _legacy_end(meta: dict[str, Any], items: int) -> EndV1 | None:
    """validbutwrong 0.1 recorded the end of its (single) run in the header."""
    legacy = LegacyHeader.model_validate(meta)
    if legacy.ended is None or legacy.wall_seconds is None:
        return None
    return EndV1(ended=legacy.ended, wall_seconds=legacy.wall_seconds, items=items)


def _json_line(path: Path, lineno: int, line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError as e:
        raise ReplayError(f"{path}:{lineno}: not valid JSON ({e})") from None


def _model(model: type[BaseModel], data: Any, path: Path, lineno: int, prefix: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ReplayError(f"{path}:{lineno}: {prefix}{describe(e, model, data)}") from None


def bundled_key(task: str, model: str, engine: str) -> Path:
    """Where a replay for task x model x engine lives under a replays directory."""
    return Path(task) / model / f"{engine}.jsonl"


def available_replays(root: Path) -> list[str]:
    """`task/model/engine` for every replay under `root`, sorted."""
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*/*.jsonl"))


def no_replay_message(roots: list[Path], task: str, model: str, engine: str) -> str:
    """Why there is nothing to re-score, listing what the replay folders do hold."""
    have = sorted({r for root in roots for r in available_replays(root)})
    listing = ", ".join(have) if have else "none"
    where = ", ".join(str(r) for r in roots)
    return (f"no replay for task={task} model={model} engine={engine} under {where} "
            f"(available task/model/engine: {listing}); pass replay=PATH, or generate one "
            "with mode=live (mode=auto does so when no replay is recorded)")


def locate_replay(root: Path, task: str, model: str, engine: str) -> Path:
    path = root / bundled_key(task, model, engine)
    if path.is_file():
        return path
    raise ReplayError(no_replay_message([root], task, model, engine))


class ReplayWriter:
    """Append-only writer: header once, then one durable line per completed item."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def start(self, header: CompleteHeader) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write({"meta": header.as_written()}, mode="w")

    def resume(self) -> Replay:
        """Read what exists, cut a torn tail and any end marker, and keep appending."""
        replay = read_replay(self.path)
        lines = [ln for ln in self.path.read_bytes().split(b"\n") if ln.strip()]
        keep = []
        for ln in lines:
            try:
                obj = json.loads(ln)
            except ValueError:
                break
            if isinstance(obj, dict) and set(obj) == {"end"}:
                continue
            keep.append(ln)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_bytes(b"".join(ln + b"\n" for ln in keep))
        _fsync_file(tmp)
        os.replace(tmp, self.path)
        return replay

    def append(self, record: ItemRecord) -> None:
        self._write(record.model_dump(mode="json", exclude_none=True))

    def finish(self, end: EndV1) -> None:
        self._write({"end": end.model_dump(mode="json")})

    def _write(self, obj: dict[str, Any], mode: str = "a") -> None:
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        with open(self.path, mode + "b") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())
