"""A large replay scored on several cores (vbw.parallel.ordered): each process scores one
run of the file's lines into its own copy of the pass, merged here in file order. A failed
run, or an id in two runs, scores the replay again in one process, so errors come as the
one-process run's; see docs/performance.md ("Replay scoring").
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from vbw import parallel
from vbw.errors import ReplayError
from vbw.replay.stream import ReplayStream, open_replay

SPLIT_BYTES = 4 << 20  # below this a second process and the merge cost more than they save
Line = tuple[int, str, "float | None"]  # an item line: (line number, id, item seconds)


def wanted(path: Path) -> bool:
    """Whether to score `path` in several processes: at least SPLIT_BYTES, or any size
    when VBW_PROCESSES asks for several."""
    try:
        return parallel.count() > 1 and (parallel.setting() is not None
                                         or path.stat().st_size >= SPLIT_BYTES)
    except OSError:
        return False


def _identity(path: Path) -> tuple[int, ...]:
    """What changes when a file is written, truncated or replaced."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def in_runs(stream: ReplayStream, read: Callable[[ReplayStream], tuple[list[str], Any]]
            ) -> list[Any] | None:
    """`read` each run of lines of `stream` (its header read), one per process, into (ids,
    value): the values in file order; None when a run failed or an id is in two runs."""
    before = _identity(stream.path)
    cuts = stream.cuts(parallel.count())
    try:
        runs = parallel.ordered(lambda i, *_: read(stream.part(cuts[i], cuts[i + 1])),
                                range(len(cuts) - 1))
    except Exception:  # noqa: BLE001 - the one-process run says which error is first
        runs = []
    if _identity(stream.path) != before:
        raise ReplayError(f"{stream.path}: the replay changed while it was scored (its "
                          "size, time or file changed); score it once nothing writes it")
    ids = [i for run_ids, _ in runs for i in run_ids]
    return [v for _, v in runs] if runs and len(set(ids)) == len(ids) else None


def _read(p: Any, stream: ReplayStream) -> list[Line]:
    """Score the stream's item lines into pass `p`; each one's number, id, timing."""
    lines, path = [], str(stream.path)
    for lineno, rec in stream.items():
        p.add(rec, path, timed=False)
        lines.append((lineno, rec.id, rec.item_seconds))
    return lines


def score_split(p: Any, stream: ReplayStream, path: str, fresh: Callable[[], Any]) -> Any:
    """Score every record of `stream` into pass `p` (vbw.score.stream.Pass) on several
    cores; the pass that holds the result (`p`, or `fresh()` after a fall-back)."""
    parent = os.getpid()

    def run(part: ReplayStream) -> tuple[list[str], Any]:
        child = os.getpid() != parent
        if child:
            p.forked()  # this process's own copy of the pass
        lines = _read(p, part)
        return [i for _, i, _ in lines], (lines, part.last_line - 1, part.end_line, part.end,
                                          part.torn_tail, p.state() if child else None)

    runs = in_runs(stream, run)
    if runs is None:
        p, again = fresh(), open_replay(stream.path)
        for rec in again.records():
            p.add(rec, path)
        stream.end, stream.end_line, stream.torn_tail = again.end, again.end_line, again.torn_tail
        return p
    before = 0
    for lines, count, end_line, end, torn, state in runs:
        if end is not None:
            stream.end, stream.end_line = end, end_line + before
        stream.torn_tail = stream.torn_tail or torn
        p.note_all([(n + before, i, s) for n, i, s in lines])
        before += count
        if state is not None:
            p.merge(state)
    stream.close()
    return p



def _keys(stream: ReplayStream) -> tuple[list[str], set[str]]:
    """The ids and arm keys of the stream's item lines, each line checked; closes it."""
    ids: list[str] = []
    keys: set[str] = set()
    with closing(stream):
        for _, rec in stream.items():  # streamed: no record is kept
            ids.append(rec.id)
            keys.update(rec.texts)
    return ids, keys


def arm_keys(path: Path) -> set[str]:
    """Every arm key of the item lines of `path` (mode=compare reads them of a
    validbutwrong 0.1 replay, whose header lists none), each line checked: in runs where
    scoring would split, else (or when a run fails) in one pass, which raises the first
    error in file order."""
    with closing(open_replay(path)) as stream:
        runs = in_runs(stream, _keys) if wanted(path) else None
    return set().union(*runs) if runs is not None else _keys(open_replay(path))[1]
