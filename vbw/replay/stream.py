"""Reading a replay one line at a time, so scoring never holds the file or its texts.

A replay of 100,000 items is a few hundred MB of text; scoring needs each item's texts
only while it scores that item. `open_replay` reads and checks the header, and
`ReplayStream.records()` yields one checked record per item line, in file order, with the
same checks and the same one-line errors as `read_replay` (which is built on it): valid
JSON, the item-line model, each id once, only arms the header lists, the end marker, a
torn last line ignored.

How it works and why: docs/design.md, section vbw.replay.stream.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic import BaseModel, ValidationError

from vbw.errors import ReplayError
from vbw.replay.format import EndV1, ItemRecord
from vbw.replay.header import FORMATS, ReplayHeader
from vbw.replay.record import ScoredRecord, as_scored, light
from vbw.task.jsontext.values import JsonLimit, check_nesting, exact, json_loads
from vbw.validation import describe

# Interventions in one item line, counted before it is decoded by their one required key
# (a key is never inside a string, whose quotes are escaped): each costs ~640 bytes
# decoded, eight times its text (1,000,000 in a 79 MB line peaked at 957 MB), and a vbw
# arm records at most one per generated token, only where the grammar refused a token.
MAX_INTERVENTIONS = 50_000
_EVENT_KEY = b'"lp_forced"'
_EVENT_BYTES = 60  # fewer than any intervention's text: a shorter line need not count them


def decode(line: bytes) -> Any:
    """The line decoded by orjson where it accepts it, else by json: json.loads(line),
    except that orjson makes an integer literal beyond 64 bits a float. The light scoring
    path reads only what that cannot change (texts, and numbers it makes floats); whatever
    keeps or writes the values uses `kept` (or `decode_exact`). Bounded (JsonLimit, a
    ValueError): at most MAX_INTERVENTIONS interventions, integers as
    vbw.task.jsontext.values.loads bounds them, and nesting within orjson's 1,024 levels (json's
    RecursionError past them is a JsonLimit); the light path reads nothing nested, so
    MAX_DEPTH is checked only where values are kept (`kept`), off the hot path."""
    if len(line) > _EVENT_BYTES * MAX_INTERVENTIONS and \
            (events := line.count(_EVENT_KEY)) > MAX_INTERVENTIONS:
        raise JsonLimit(f"it holds {events:,} interventions (vbw reads at most "
                        f"{MAX_INTERVENTIONS:,} in a line)")
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json_loads(line)


def decode_exact(line: bytes) -> Any:
    """json.loads(line), by orjson where that gives the same values (see `exact`), within
    MAX_DEPTH."""
    check_nesting(line)
    return exact(decode(line), line)


def kept(obj: Any, line: bytes, path: Path, lineno: int) -> Any:
    """`obj`, decoded from `line`, as json.loads gives it (`exact`), for values that are
    kept or written: refused past MAX_DEPTH (vbw.task.jsontext.values) in one line."""
    try:
        check_nesting(line)
    except JsonLimit as e:
        raise ReplayError(f"{path}:{lineno}: the line is refused: {e}") from None
    return exact(obj, line)


def validate_model(model: type[BaseModel], data: Any, path: Path, lineno: int,
                   at: str) -> Any:
    """`data`, the part of line `lineno` at key `at` ('': the whole line), as `model`; an
    error names the field by its path in the line."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ReplayError(f"{path}:{lineno}: {describe(e, model, data, at)}") from None


def _json_line(path: Path, lineno: int, line: bytes) -> Any:
    try:
        return decode(line)
    except JsonLimit as e:
        raise ReplayError(f"{path}:{lineno}: the line is refused: {e}") from None
    except ValueError as e:
        raise ReplayError(f"{path}:{lineno}: not valid JSON ({e})") from None


class ReplayStream:
    """A replay whose header is read and checked; its item lines are read on demand."""

    def __init__(self, path: Path, f: BinaryIO, meta: dict[str, Any], header: ReplayHeader,
                 lines: Iterator[bytes]) -> None:
        self.path, self.header, self.meta_as_written = path, header, meta
        self._f, self._lines = f, lines
        self.end: EndV1 | None = None
        self.end_line = 0
        self.last_line = 1  # the number of the last line read (the header is line 1)
        self.torn_tail = False

    def lines(self, exact_values: bool = False) -> Iterator[tuple[int, Any]]:
        """(line number among non-blank lines, decoded JSON) per line after the header
        (`decode`'s values; json.loads' with `exact_values`); an unreadable last line
        without its newline is a torn tail, skipped."""
        for lineno, obj, line in self._decoded():
            yield lineno, (kept(obj, line, self.path, lineno) if exact_values else obj)

    def _decoded(self) -> Iterator[tuple[int, Any, bytes]]:
        """`lines`, with each line's bytes."""
        try:
            for lineno, line in enumerate(self._lines, 2):
                self.last_line = lineno
                if not line.endswith(b"\n"):  # the file's last line: a torn write?
                    try:
                        obj = decode(line)
                    except ValueError:
                        self.torn_tail = True
                        return
                    yield lineno, obj, line
                    return
                yield lineno, _json_line(self.path, lineno, line[:-1]), line
        finally:
            self._f.close()

    def items(self, full: bool = False) -> Iterator[tuple[int, Any]]:
        """(line number, ScoredRecord, or ItemRecord with `full`) per item line, checked;
        the end marker is kept in `self.end` (its line number in `self.end_line`)."""
        seen: set[str] = set()
        listed = self.header.arms
        allowed = None if listed is None else frozenset(listed)
        for lineno, obj, line in self._decoded():
            if isinstance(obj, dict) and len(obj) == 1 and "end" in obj:
                self.end = validate_model(EndV1, kept(obj, line, self.path, lineno)["end"],
                                          self.path, lineno, "end")
                self.end_line = lineno
                continue
            rec: Any = None if full else light(obj)
            if rec is None:  # the values are kept: json's, exactly
                rec = validate_model(ItemRecord, kept(obj, line, self.path, lineno),
                                     self.path, lineno, "")
            arm_keys = rec.texts if isinstance(rec, ScoredRecord) else rec.arms
            if rec.id in seen:
                raise ReplayError(f"{self.path}:{lineno}: item id {rec.id!r} appears twice")
            unlisted = [] if allowed is None or arm_keys.keys() <= allowed else \
                [k for k in arm_keys if k not in allowed]
            if unlisted:
                raise ReplayError(f"{self.path}:{lineno}: arms.{unlisted[0]}: not an arm the "
                                  f"header lists (meta.arms: {', '.join(listed or [])})")
            self._check_samples(rec, lineno)
            seen.add(rec.id)
            yield lineno, (rec if full or isinstance(rec, ScoredRecord) else as_scored(rec))

    def _check_samples(self, rec: Any, lineno: int) -> None:
        """A vbw-replay/2 item line holds samples 2..k, each with the arm keys of `arms`;
        a vbw-replay/1 line holds none."""
        k, samples = self.header.samples, rec.samples
        if k == 1:
            if samples is not None:
                raise ReplayError(f"{self.path}:{lineno}: samples: only a vbw-replay/2 "
                                  "replay (decoding.samples > 1) holds more than one sample")
            return
        if samples is None or len(samples) != k - 1:
            got = "none" if samples is None else len(samples)
            raise ReplayError(f"{self.path}:{lineno}: samples: the header's "
                              f"decoding.samples={k} needs {k - 1} more sample(s) per item "
                              f"after `arms`, this line has {got}")
        keys = rec.texts.keys() if isinstance(rec, ScoredRecord) else rec.arms.keys()
        for i, s in enumerate(samples):
            if (s.texts.keys() if isinstance(s, ScoredRecord) else s.keys()) != keys:
                raise ReplayError(f"{self.path}:{lineno}: samples.{i}: its arm keys differ "
                                  f"from `arms` ({', '.join(keys)})")

    def close(self) -> None:
        """Close the file without reading further (a header was all that was needed)."""
        self._f.close()

    def cuts(self, parts: int) -> list[int]:
        """Byte offsets that cut the lines after the header into `parts` runs of about
        equal size, each at a line's start (the first the header's end, the last the
        file's size), for a stream whose header is all it has read: `part` reads one."""
        start, size = self._f.tell(), os.fstat(self._f.fileno()).st_size
        out = [start]
        with open(self.path, "rb") as f:
            for i in range(1, parts):
                f.seek(max(out[-1], start + (size - start) * i // parts - 1))
                if f.read(1) != b"\n":
                    f.readline()
                out.append(max(out[-1], min(f.tell(), size)))
        return out + [size]

    def part(self, start: int, end: int) -> "ReplayStream":
        """The lines that start in bytes [start, end) (`cuts`) as a stream of their own,
        numbered from 2 as if they followed the header (another process may read the
        others: vbw.score.split)."""
        f = open(self.path, "rb")
        f.seek(start)
        return ReplayStream(self.path, f, self.meta_as_written, self.header,
                            _nonblank(f, start, end))

    def drain(self) -> None:
        """Read to the end: every line checked, none kept."""
        for _ in self.items():
            pass

    def records(self) -> Iterator[ScoredRecord]:
        for _, rec in self.items():
            yield rec


def _nonblank(f: BinaryIO, at: int = 0, end: int | None = None) -> Iterator[bytes]:
    """The lines that are not blank (`line.strip()` would copy each line to say so); with
    `end`, only those that start before byte `end` (`at`: where the file is)."""
    if end is None:
        for line in f:
            if line and not line.isspace():
                yield line
        return
    for line in f:
        if at >= end:
            return
        at += len(line)
        if line and not line.isspace():
            yield line


def open_replay(path: Path) -> ReplayStream:
    """Open a replay and check its header; errors name the file, line and field."""
    if not path.is_file():
        raise ReplayError(f"replay file not found: {path}")
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ReplayError(f"cannot read replay {path}: {e}") from None
    lines = _nonblank(f)
    first = next(lines, None)
    if first is None:
        f.close()
        raise ReplayError(f"{path}: empty replay file")
    try:
        meta = _meta_line(path, first)
        header: ReplayHeader = validate_model(ReplayHeader, meta, path, 1, "meta")
    except BaseException:
        f.close()
        raise
    return ReplayStream(path, f, meta, header, lines)


def _meta_line(path: Path, line: bytes) -> dict[str, Any]:
    if not line.endswith(b"\n"):  # a header alone, cut mid-write
        try:
            decode(line)
        except ValueError:
            raise ReplayError(f"{path}: empty replay file") from None
    raw = line[:-1] if line.endswith(b"\n") else line
    head = kept(_json_line(path, 1, raw), raw, path, 1)
    if not isinstance(head, dict) or set(head) != {"meta"} or not isinstance(head["meta"], dict):
        raise ReplayError(f"{path}:1: first line must be {{\"meta\": {{...}}}} and nothing else")
    meta: dict[str, Any] = head["meta"]
    if "format" in meta and meta["format"] not in FORMATS:
        raise ReplayError(f"{path}:1: meta.format {meta['format']!r} is not supported "
                          f"(this vbw reads {' and '.join(map(repr, FORMATS))} and "
                          "validbutwrong 0.1 replays)")
    return meta
