"""Write one task's report files: report.json, report.md, report.html, quadrants.svg,
ledger.csv.

Written atomically, because a CI job or a person may read them while a run is killed:
every file goes to a hidden temporary name in the same folder, is fsynced and renamed
over its final name, and report.json goes last, after any older report.json was removed.
So a file under its final name is always whole, and report.json's presence means the
whole set belongs to one finished run.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from vbw.redact import escape_surrogates
from vbw.report.browser import Browser
from vbw.report.html import render_html
from vbw.report.markdown import coverage, render_markdown
from vbw.report.svg import render_svg
from vbw.score.model import Report

MANIFEST = "report.json"  # written last: its presence means the set is complete
PARTIAL = ".partial-"     # the infix of temporary names, e.g. .ledger.csv.partial-1234


def ledger_csv(r: Report) -> str:
    buf = io.StringIO()
    arms = list(r.arms)
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", *arms])
    for row in r.ledger:
        w.writerow([row["id"], *(row[a] for a in arms)])
    return buf.getvalue()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, fsync it, rename it over `path`.
    A lone surrogate (from a server's JSON, kept in a replay) is written as its `\\udXXX`
    escape: lossless in JSON, visible elsewhere, and encodable as UTF-8."""
    tmp = path.with_name(f".{path.name}{PARTIAL}{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(escape_surrogates(text))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_reports(r: Report, out_dir: Path, browser: Browser | None = None) -> str:
    """Write the five files into out_dir; return the markdown (also printed by the CLI).
    `browser` is report.html's item data (vbw.report.browser); without it the page holds
    the tables and panels only."""
    out_dir.mkdir(parents=True, exist_ok=True)
    r = r.model_copy(update={"coverage": coverage(r)})  # the sentence report.md says too
    md, svg = render_markdown(r), render_svg(r)
    contents = {"report.md": md, "quadrants.svg": svg, "report.html": render_html(r, svg, browser),
                "ledger.csv": ledger_csv(r),
                MANIFEST: r.model_dump_json(by_alias=True, indent=1) + "\n"}  # all rendered first
    write_set(out_dir, contents)
    return md


def write_set(out_dir: Path, contents: dict[str, str]) -> None:
    """Write a set of rendered files atomically, report.json last (see the docstring)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f".*{PARTIAL}*"):  # left by a run killed mid-write
        stale.unlink(missing_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    _fsync_dir(out_dir)
    for name in sorted(contents, key=lambda k: k == MANIFEST):  # stable: MANIFEST last
        write_atomic(out_dir / name, contents[name])
    _fsync_dir(out_dir)
