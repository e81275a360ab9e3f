"""Dataset loading: JSONL or JSON rows, an optional join on a key, first-N selection.

A row of a .jsonl file is decoded by orjson, and by Python's json wherever orjson refuses
the line (NaN, infinity, lone surrogate escapes: what json accepts and orjson does not)
or its value may differ from json's (an integer beyond 64 bits, which orjson makes a
float: vbw.task.jsontext.values.orjson_agrees), so every row is the value json.loads gives
and every error is its message; bounded as any untrusted JSON is
(vbw.task.jsontext.values.loads: nesting and integer length, refused in one line naming the
file and line). A 100,000-row dataset is read before any scoring starts (serial time in a
replay's scoring), in about two thirds of json's time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from vbw.errors import DataError
from vbw.task.jsontext.values import JsonLimit, loads


def read_data_bytes(path: Path) -> bytes:
    """A dataset file's bytes, or a one-line DataError (missing, a folder, unreadable)."""
    if path.is_dir():
        raise DataError(f"dataset file {path} is a folder, not a file")
    if not path.is_file():
        raise DataError(f"dataset file not found: {path}")
    try:
        return path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read dataset {path}: {e.strerror or e}") from None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a .jsonl file (one object per line) or a .json file (a list of objects)."""
    try:
        text = read_data_bytes(path).decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"cannot read dataset {path}: not UTF-8 ({e.reason} at byte "
                        f"{e.start})") from None
    if path.suffix == ".json":
        try:
            rows = loads(text)
        except ValueError as e:
            raise DataError(f"{path}: {_why(e, str(e))}") from None
        if not isinstance(rows, list):
            raise DataError(f"{path}: a .json dataset must hold a list of objects")
    else:
        rows = []
        for lineno, line in enumerate(_lines(text), 1):
            if not line.strip():
                continue
            try:
                rows.append(loads(line))
            except ValueError as e:
                raise DataError(f"{path}:{lineno}: {_why(e, getattr(e, 'msg', str(e)))}") \
                    from None
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DataError(f"{path}: row {i} is {type(row).__name__}, not an object")
    return rows


def _why(e: ValueError, said: str) -> str:
    """A decoding error, as `said` (its message) words it."""
    return f"refused: {e}" if isinstance(e, JsonLimit) else f"not valid JSON ({said})"


_CHUNK = 1 << 20


def _lines(text: str) -> Iterator[str]:
    """`text.splitlines()`, one chunk of about a MiB at a time: the list of every line of
    a large dataset (as big again as its text) is never held beside the rows being built.
    A chunk ends just after a "\n", which ends a line in any case ("\r\n" stays whole),
    so the lines are exactly splitlines'."""
    start = 0
    while start < len(text):
        cut = text.find("\n", start + _CHUNK)
        end = len(text) if cut < 0 else cut + 1
        yield from text[start:end].splitlines()
        start = end


def join_rows(left: list[dict[str, Any]], right: list[dict[str, Any]], on: str,
              right_path: Path) -> list[dict[str, Any]]:
    """Each left row merged with the right row sharing its `on` key (left order kept)."""
    index: dict[Any, dict[str, Any]] = {}
    for row in right:
        if on not in row:
            raise DataError(f"{right_path}: a row has no join key {on!r}")
        index[row[on]] = row
    joined = []
    for row in left:
        key = row.get(on)
        if key not in index:
            raise DataError(f"{right_path}: no row with {on} = {key!r} to join")
        clash = (set(row) & set(index[key])) - {on}
        if clash:
            raise DataError(f"{right_path}: joined rows share field(s) {sorted(clash)}")
        joined.append({**row, **index[key]})
    return joined
