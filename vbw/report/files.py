"""Write one task's report files: report.json, report.md, report.html, quadrants.svg,
ledger.csv.

Written atomically, because a CI job or a person may read them while a run is killed:
every file goes to a hidden temporary name in the same folder, is fsynced and renamed
over its final name, and report.json goes last, after any older report.json was removed.
So a file under its final name is always whole, and report.json's presence means the
whole set belongs to one finished run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from vbw.redact import escape_surrogates
from vbw.report.browser import Browser
from vbw.report.html import html_chunks
from vbw.report.markdown import coverage, render_markdown
from vbw.report.svg import render_svg
from vbw.score.model import Report

MANIFEST = "report.json"  # written last: its presence means the set is complete
PARTIAL = ".partial-"     # the infix of temporary names, e.g. .ledger.csv.partial-1234


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: str) -> str:
    """A CSV cell a spreadsheet reads as text: one starting with = + - @ or a tab or CR
    (ids and arm keys come from task files and replays) would run as a formula (OWASP's
    CSV injection), so it gets a leading single quote, as spreadsheets expect."""
    return "'" + value if value.startswith(_FORMULA_START) else value


def _field(value: str) -> str:
    """RFC 4180 quoting; unlike csv.writer with a "\n" line end, a CR inside a field is
    quoted too (an unquoted CR ends the row in spreadsheets and most readers)."""
    if any(c in value for c in ',"\r\n') or not value:
        return '"' + value.replace('"', '""') + '"'
    return value


def ledger_csv(r: Report) -> str:
    arms = list(r.arms)
    lines = [",".join(_field(cell(c)) for c in ("id", *arms))]
    for row in r.ledger:
        lines.append(",".join(_field(cell(c)) for c in (row["id"], *(row[a] for a in arms))))
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
    os.replace(tmp, path)


Page = Callable[[], Iterable[str]]


def write_reports(r: Report, out_dir: Path,
                  browser: Browser | Callable[[], Browser] | None = None,
                  err: TextIO | None = None) -> str:
    """Write the five files into out_dir; return the markdown (also printed by the CLI).
    `browser` is report.html's item data (vbw.report.browser), or what builds it; without
    it the page holds the tables and panels only. The page is streamed to its file (see
    vbw.report.html); if it cannot be built, the other files are still written and one
    line on `err` says why."""
    out_dir.mkdir(parents=True, exist_ok=True)
    r = r.model_copy(update={"coverage": coverage(r)})  # the sentence report.md says too
    md, svg = render_markdown(r), render_svg(r)

    def page() -> Iterable[str]:
        data = browser() if callable(browser) else browser
        return html_chunks(r, svg, data)

    contents = {"report.md": md, "quadrants.svg": svg, "ledger.csv": ledger_csv(r),
                MANIFEST: r.model_dump_json(by_alias=True, indent=1) + "\n"}  # all rendered first
    write_set(out_dir, contents, pages={"report.html": page}, err=err)
    return md


def write_set(out_dir: Path, contents: dict[str, str], pages: dict[str, Page] | None = None,
              err: TextIO | None = None) -> None:
    """Write a set of rendered files atomically, report.json last (see the docstring).
    `pages` are streamed after the others: one that fails to build is left out (an older
    one removed) with one line on `err`, and the set is written all the same."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f".*{PARTIAL}*"):  # left by a run killed mid-write
        stale.unlink(missing_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    _fsync_dir(out_dir)
    last = [k for k in contents if k == MANIFEST]
    for name in [k for k in contents if k != MANIFEST]:
        write_atomic(out_dir / name, contents[name])
    for name, page in (pages or {}).items():
        try:
            write_atomic(out_dir / name, page())
        except (MemoryError, RecursionError, ValueError, TypeError) as e:
            (out_dir / name).unlink(missing_ok=True)
            why = " ".join(str(e).split())[:200] or "out of memory"
            print(f"vbw: warning: {out_dir / name}: not written ({type(e).__name__}: {why}); "
                  "the other report files are", file=err or sys.stderr, flush=True)
    for name in last:
        write_atomic(out_dir / name, contents[name])
    _fsync_dir(out_dir)
