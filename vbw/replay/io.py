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

from vbw.errors import ReplayError
from vbw.redact import escape_surrogates
from vbw.replay.format import EndV1, ItemRecord, Replay
from vbw.replay.header import CompleteHeader
from vbw.replay.legacy import LegacyHeader
from vbw.replay.stream import MAX_INTERVENTIONS, open_replay


def read_replay(path: Path) -> Replay:
    """Parse and validate a whole replay; errors name the file, line and field. Scoring
    streams it instead (vbw.replay.stream), holding no texts."""
    stream = open_replay(path)
    records: list[ItemRecord] = [rec for _, rec in stream.items(full=True)]
    end = stream.end
    if stream.header.version == 0 and end is None:
        end = legacy_end(stream.meta_as_written, len(records))
    return Replay(path=str(path), header=stream.header, meta_as_written=stream.meta_as_written,
                  records=records, end=end, torn_tail=stream.torn_tail)


def legacy_end(meta: dict[str, Any], items: int) -> EndV1 | None:
    """validbutwrong 0.1 recorded the end of its (single) run in the header."""
    legacy = LegacyHeader.model_validate(meta)
    if legacy.ended is None or legacy.wall_seconds is None:
        return None
    return EndV1(ended=legacy.ended, wall_seconds=legacy.wall_seconds, items=items)


def bundled_key(task: str, model: str, engine: str) -> Path:
    """Where a replay for task x model x engine lives under a replays directory."""
    return Path(task) / model / f"{engine}.jsonl"


def available_replays(root: Path) -> list[str]:
    """`task/model/engine` for every replay under `root`, sorted."""
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*/*.jsonl"))


COMPACT = "-compact"  # a replay file's engine suffix when generated with compact whitespace


def engine_shown(key: str) -> str:
    """A replay file's engine as the user selects it: `outlines-compact` is no engine but
    `outlines` with `engine.whitespace=compact`."""
    if key.endswith(COMPACT) and len(key) > len(COMPACT):
        return f"{key.removesuffix(COMPACT)} (engine.whitespace=compact)"
    return key


def no_replay_message(roots: list[Path], task: str, model: str, engine: str) -> str:
    """Why there is nothing to re-score, listing what the replay folders do hold."""
    have = sorted({r for root in roots for r in available_replays(root)})
    listing = ", ".join(f"{r.rsplit('/', 1)[0]}/{engine_shown(r.rsplit('/', 1)[1])}"
                        for r in have) if have else "none"
    where = ", ".join(str(r) for r in roots)
    asked = engine_shown(engine).replace(" (", " ").rstrip(")")
    return (f"no replay for task={task} model={model} engine={asked} under {where} "
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
        self._write(within_cap(record).model_dump(mode="json", exclude_none=True))

    def finish(self, end: EndV1) -> None:
        self._write({"end": end.model_dump(mode="json")})

    def _write(self, obj: dict[str, Any], mode: str = "a") -> None:
        # a lone surrogate (a server's "\ud800") stays a JSON escape: lossless, encodable
        data = (escape_surrogates(json.dumps(obj, ensure_ascii=False)) + "\n").encode("utf-8")
        with open(self.path, mode + "b") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


def within_cap(record: ItemRecord) -> ItemRecord:
    """The record as a replay can hold it: past MAX_INTERVENTIONS in the line (which the
    reader refuses), the arm records (of any sample) with the most interventions record
    them as not recorded (None), so what vbw writes always re-scores."""
    samples = [dict(record.arms), *(dict(s) for s in record.samples or [])]
    counts = {(i, k): len(a.interventions) for i, arms in enumerate(samples)
              for k, a in arms.items() if a.interventions is not None}
    total = sum(counts.values())
    if total <= MAX_INTERVENTIONS:
        return record
    for i, key in sorted(counts, key=counts.__getitem__, reverse=True):
        if total <= MAX_INTERVENTIONS:
            break
        samples[i][key] = samples[i][key].model_copy(update={"interventions": None})
        total -= counts[(i, key)]
    return record.model_copy(update={"arms": samples[0],
                                     "samples": samples[1:] if record.samples else None})


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())
