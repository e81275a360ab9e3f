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

import csv
import io
import os
from collections.abc import Collection
from pathlib import Path

from vbw.redact import escape_surrogates
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


def write_set(out_dir: Path, contents: dict[str, str], manifest: str = MANIFEST,
              drop: Collection[str] = ()) -> None:
    """Write a set of rendered files atomically, the manifest last (see the docstring);
    the files named in `drop` (outputs not chosen) are removed with the old manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob(f".*{PARTIAL}*"):  # left by a run killed mid-write
        stale.unlink(missing_ok=True)
    (out_dir / manifest).unlink(missing_ok=True)
    for name in drop:
        (out_dir / name).unlink(missing_ok=True)
    _fsync_dir(out_dir)
    for name in sorted(contents, key=lambda k: k == manifest):  # stable: manifest last
        write_atomic(out_dir / name, contents[name])
    _fsync_dir(out_dir)
