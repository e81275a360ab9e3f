"""Scoring a large replay on several cores (vbw.parallel): each process scores one run of
the file's lines, cut at a line's start (ReplayStream.cuts), into its own copy of the pass;
the others send back what their pass gathered (Pass.state) and each line's number, id and
timing, which this process merges in file order. A line error in any process, an id in two
runs or a failed child scores the replay again in one process from its first line, so the
errors and their order are the one-process run's. Each run opens the file again, so the
file's identity is compared before and after (a change is one ReplayError). Used for a
replay of at least SPLIT_BYTES, or any with VBW_PROCESSES of 2 or more.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vbw import parallel
from vbw.errors import ReplayError
from vbw.replay.stream import ReplayStream, open_replay

SPLIT_BYTES = 4 << 20  # below this a second process and the merge cost more than they save
Line = tuple[int, str, "float | None"]  # an item line: (line number, id, item seconds)


def wanted(path: Path) -> bool:
    """Whether to score this replay in several processes (see the module docstring)."""
    if parallel.count() < 2:
        return False
    try:
        return parallel.forced() or path.stat().st_size >= SPLIT_BYTES
    except OSError:
        return False


def _read(p: Any, stream: ReplayStream) -> list[Line]:
    """Score the stream's item lines into pass `p`; each one's number, id, timing."""
    lines, path = [], str(stream.path)
    for lineno, rec in stream.items():
        p.add(rec, path, timed=False)
        lines.append((lineno, rec.id, rec.item_seconds))
    return lines


def _alone(fresh: Callable[[], Any], stream: ReplayStream, path: str) -> Any:
    """The one-process pass from the first line, into a new pass."""
    p, again = fresh(), open_replay(stream.path)
    for rec in again.records():
        p.add(rec, path)
    stream.end, stream.end_line, stream.torn_tail = again.end, again.end_line, again.torn_tail
    return p


def _identity(path: Path) -> tuple[int, ...]:
    """What changes when a file is written, truncated or replaced."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def in_runs(stream: ReplayStream, read: Callable[[ReplayStream], Any]) -> list[Any] | None:
    """`read` each run of lines of `stream` (whose header is all it has read), one run per
    process: the results in file order; None when any run failed."""
    before = _identity(stream.path)
    cuts = stream.cuts(parallel.count())
    try:
        runs = parallel.ordered(lambda i, *_: read(stream.part(cuts[i], cuts[i + 1])),
                                range(len(cuts) - 1))
    except Exception:  # noqa: BLE001 - the one-process run says which error is first
        runs = None
    if _identity(stream.path) != before:
        raise ReplayError(f"{stream.path}: the replay changed while it was scored (its "
                          "size, time or file changed); score it once nothing writes it")
    return runs


def score_split(p: Any, stream: ReplayStream, path: str, fresh: Callable[[], Any]) -> Any:
    """Score every record of `stream` into pass `p` (vbw.score.stream.Pass), one run of
    lines per process; returns the pass that holds the result (`p`, or one from `fresh()`
    when the run fell back to one process)."""
    parent = os.getpid()

    def run(part: ReplayStream) -> tuple[list[Line], int, Any, bool, Any]:
        if os.getpid() != parent:
            p.forked()  # this process's own copy of the pass
        lines = _read(p, part)
        end = (part.end_line, part.end) if part.end is not None else None
        return (lines, part.last_line - 1, end, part.torn_tail,
                p.state() if os.getpid() != parent else None)

    runs = in_runs(stream, run)
    if runs is None:
        return _alone(fresh, stream, path)
    lines, before = [], 0
    for part, count, end, torn, _ in runs:
        lines += [(n + before, item_id, s) for n, item_id, s in part]
        if end is not None:
            stream.end, stream.end_line = end[1], end[0] + before
        stream.torn_tail = stream.torn_tail or torn
        before += count
    if len({item_id for _, item_id, _ in lines}) != len(lines):  # an id in two runs
        return _alone(fresh, stream, path)
    for *_, state in runs:
        if state is not None:
            p.merge(state)
    p.note_all(lines)
    stream.close()
    return p


def _keys(stream: ReplayStream) -> tuple[set[str], list[str]]:
    """The arm keys and ids of the stream's item lines, each line checked."""
    keys: set[str] = set()
    ids = []
    for _, rec in stream.items():
        keys.update(rec.texts)
        ids.append(rec.id)
    return keys, ids


def arm_keys(path: Path) -> set[str]:
    """Every arm key the item lines of `path` hold, each line checked as
    `ReplayStream.records()` checks it (the first error in file order is raised): what
    mode=compare reads of a validbutwrong 0.1 replay, whose header lists no arms."""
    if wanted(path):
        stream = open_replay(path)
        runs = in_runs(stream, _keys)
        stream.close()
        if runs is not None:
            ids = [i for _, run_ids in runs for i in run_ids]
            if len(set(ids)) == len(ids):
                return set().union(*(k for k, _ in runs))
    return _keys(open_replay(path))[0]
