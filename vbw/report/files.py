"""Write a set of output files (a report's report.json, report.md, report.html,
quadrants.svg, ledger.csv; a comparison's; a sweep summary's; vbw.report.writers chooses
which) and render ledger.csv.

Written atomically, because a CI job or a person may read them while a run is killed:
every file goes to a hidden temporary name in the same folder, is fsynced and renamed
over its final name, and the manifest (report.json, summary.json) goes last, after any
older one was removed. So a file under its final name is always whole, and the
manifest's presence means the whole set belongs to one finished run.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TextIO

from vbw.redact import escape_surrogates
from vbw.score.cells import cell, quoted as _field
from vbw.score.results import Report

MANIFEST = "report.json"  # written last: its presence means the set is complete
PARTIAL = ".partial-"     # the infix of temporary names, e.g. .ledger.csv.partial-1234


def ledger_csv(r: Report) -> str:
    arms = list(r.arms)
    lines = [",".join(_field(cell(c)) for c in ("id", *arms))]
    states: dict[str, str] = {}  # a state's cell, rendered once (a ledger has a handful)
    for row in r.ledger:
        cells = [_field(cell(row["id"]))]
        for a in arms:
            state = row[a]
            done = states.get(state)
            if done is None:
                done = states[state] = _field(cell(state))
            cells.append(done)
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write `text` (or its parts, one after another) to a temporary file beside `path`,
    fsync it, rename it over `path`; a failure mid-way leaves no temporary file.
    A lone surrogate (from a server's JSON, kept in a replay) is written as its `\\udXXX`
    escape: lossless in JSON, visible elsewhere, and encodable as UTF-8."""
    os.replace(_written(path, text), path)


def _written(path: Path, text: str | Iterable[str]) -> Path:
    """write_atomic's temporary file, written and fsynced (not yet renamed)."""
    tmp = path.with_name(f".{path.name}{PARTIAL}{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            for part in [text] if isinstance(text, str) else text:
                f.write(escape_surrogates(part))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


class _Ahead:
    """A file's temporary copy written by a thread (write and fsync wait on the disk,
    outside the interpreter lock) while this thread builds a page; renamed into place
    only when `done` is called, after the page: the manifest stays last."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self._tmp, self._error = path, None, None
        self._thread = threading.Thread(target=self._write, args=(text,))
        self._thread.start()

    def _write(self, text: str) -> None:
        try:
            self._tmp = _written(self.path, text)
        except BaseException as e:  # noqa: BLE001  (raised in the caller's thread)
            self._error = e

    def done(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error
        os.replace(self._tmp, self.path)

    def drop(self) -> None:
        self._thread.join()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)


Page = Callable[[], Iterable[str]]


def write_set(out_dir: Path, contents: dict[str, str], manifest: str = MANIFEST,
              drop: Collection[str] = (), pages: dict[str, Page] | None = None,
              err: TextIO | None = None) -> None:
    """Write a set of rendered files atomically, the manifest last (see the docstring);
    the files named in `drop` (outputs not chosen) are removed with the old manifest.
    `pages` are streamed to their files after the others: one that fails to build is left
    out (an older one removed) with one line on `err`, and the set is written all the same."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f".*{PARTIAL}*"):  # left by a run killed mid-write
        stale.unlink(missing_ok=True)
    (out_dir / manifest).unlink(missing_ok=True)
    for name in drop:
        (out_dir / name).unlink(missing_ok=True)
    _fsync_dir(out_dir)
    for name in [k for k in contents if k != manifest]:
        write_atomic(out_dir / name, contents[name])
    # the manifest's copy is written while the pages are built, and renamed after them
    ahead = _Ahead(out_dir / manifest, contents[manifest]) \
        if manifest in contents and pages else None
    try:
        for name, page in (pages or {}).items():
            try:
                write_atomic(out_dir / name, page())
            except (MemoryError, RecursionError, ValueError, TypeError) as e:
                (out_dir / name).unlink(missing_ok=True)
                why = " ".join(str(e).split())[:200] or "out of memory"
                print(f"vbw: warning: {out_dir / name}: not written ({type(e).__name__}: "
                      f"{why}); the other report files are", file=err or sys.stderr,
                      flush=True)
    except BaseException:
        if ahead is not None:
            ahead.drop()
        raise
    if ahead is not None:
        ahead.done()
    elif manifest in contents:
        write_atomic(out_dir / manifest, contents[manifest])
    _fsync_dir(out_dir)
