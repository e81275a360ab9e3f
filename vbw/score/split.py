"""Scoring a large replay on two cores: a forked worker scores part of the file.

Scoring is pure-Python work per item (building it from its task row, the task checks,
each arm's answer, validity and correctness), independent across items, so a second
process halves it. The file's bytes after the header are cut into PARTS runs of lines,
each cut at a line's start (ReplayStream.cuts); this process claims runs from the front,
a worker forked after the header was read claims them from the back, each reading and
scoring the runs it claimed until the two meet (`_Claims`): neither reads, let alone
decodes, a line of the other's, and whichever is faster (a machine shared with other
jobs slows one process, not the split) reads more. The worker sends back what its pass
gathered (the per-item arrays, exclusions, the first unbuildable row or lacking arm, the
task checks' state) and each of its runs' lines (number within the run, id, timing),
which the parent merges: every figure is a function of the (item, arm) arrays and of the
checks' counts and first evidence by position, the lines are numbered and the timings
and the ids the task does not select put back in file order, so the report is byte for
byte the one-process run's (tests/score/test_split.py compares every output file).

mode=compare's passes split the same way: their task checks are shared by the replays
(each item checked once, vbw.score.stream.SharedAudit), so the worker gathers its own
checks afresh and the parent adds them and the items they covered to the shared ones.

Errors keep the one-process run's words and order without either process reading the
other's lines: a line that fails in either process (bad JSON, the item-line model, an
unlisted arm, a repeated id among its lines, a prompt over its budget), an id that
appears in two runs, or a worker that fails in any other way makes the parent score
the replay again in one process from its first line, which raises the first error in
file order (or, for a failed worker, scores its lines). A valid replay never pays that
second pass; a broken one pays it at most once, so scoring stays linear.

Each run is read by its own open of the file, so a replay written, truncated or replaced
while it is scored would give a view no version of it had: the file's identity (inode,
size, modification time) is compared before and after, and a change is one line (a
ReplayError). A worker found stopped (SIGSTOP) is killed and the parent scores alone
(vbw.pipes.receive_from): neither waits forever.

Used when the replay holds at least SPLIT_BYTES, the machine has two cores and `os.fork`
exists; VBW_SCORING_PROCESSES=1 in the environment keeps scoring in one process, =2 splits
any replay (the tests' way to run it on small ones).
"""

from __future__ import annotations

import mmap
import os
import select
import struct
from pathlib import Path
from collections.abc import Callable
from typing import Any

from vbw.errors import ReplayError
from vbw.pipes import POLL, Pending, beside
from vbw.replay.stream import ReplayStream, open_replay

SPLIT_BYTES = 4 << 20  # below this the fork and the merge cost more than they save
ENV = "VBW_SCORING_PROCESSES"
# Set while a caller already runs this process beside another one on the same cores
# (vbw.modes.forked scores a run's tasks in two processes): a replay is then scored in one
# process, so two tasks never make four processes on two cores.
cores_taken = False


def wanted(path: Path) -> bool:
    """Whether to score this replay in two processes: VBW_SCORING_PROCESSES=1 never, =2
    always (where os.fork exists), unset when the replay is large and there are two
    cores no other process of this run is using."""
    setting = os.environ.get(ENV, "").strip()
    if setting == "1" or not hasattr(os, "fork"):
        return False
    if setting == "2":
        return True
    if cores_taken or (os.cpu_count() or 1) < 2:
        return False
    try:
        return path.stat().st_size >= SPLIT_BYTES
    except OSError:
        return False


Line = tuple[int, str, "float | None"]  # an item line: (line number, id, item seconds)


def _read(p: Any, stream: ReplayStream) -> list[Line]:
    """Score the stream's item lines into pass `p`; each one's number, id, timing."""
    lines, path = [], str(stream.path)
    for lineno, rec in stream.items():
        p.add(rec, path, timed=False)
        lines.append((lineno, rec.id, rec.item_seconds))
    return lines


def _alone(fresh: Callable[[], Any], stream: ReplayStream, path: str) -> Any:
    """The one-process pass from the first line, into a new pass: what a replay that
    holds an error (any line's, in either process) or a failed worker costs. Its errors,
    and their order, are then the one-process run's by construction."""
    p, again = fresh(), open_replay(stream.path)
    for rec in again.records():
        p.add(rec, path)
    stream.end, stream.end_line, stream.torn_tail = again.end, again.end_line, again.torn_tail
    return p


def in_two(mine: Callable[[], Any], theirs: Callable[[], Any]) -> tuple[Any, Any] | None:
    """`theirs()` in a forked worker while `mine()` runs here (their results must pickle):
    both results, or None when either raised or the worker failed in any way (it is then
    stopped; the caller does the work in one process, for the first error in its own
    order)."""
    worker = beside(theirs)
    try:
        own = mine()
    except Exception:  # noqa: BLE001 - the one-process run says which error is first
        worker.cancel()
        return None
    except BaseException:  # an interrupt: the worker is stopped too
        worker.cancel()
        raise
    found = worker.result()
    return None if found is None else (own, found)


PARTS = 64  # runs of lines the two processes claim, from either end of the file


class _Claims:
    """Which runs of lines (ReplayStream.cuts) are taken: this process claims them from
    the front, the worker from the back, until they meet, so whichever runs faster reads
    more (a machine shared with other jobs slows one process, not the split). Two
    counters in memory both processes share, changed only while holding a one-byte token
    that a pipe carries (the read that takes it and the write that returns it order
    every change)."""

    def __init__(self, parts: int) -> None:
        self._shared = mmap.mmap(-1, 16)  # anonymous and shared: both processes see it
        self._shared[:] = struct.pack("qq", 0, parts)
        self._take, self._give = os.pipe()
        os.write(self._give, b"t")

    def claim(self, front: bool, worker: Pending | None = None) -> int | None:
        """The next run from the front (this process) or the back (the worker); None
        once they meet. This process waits for the token watching the `worker`: one that
        is gone while the token is not back (killed while it held it), or is stopped
        (SIGSTOP: it may never give it back), raises."""
        while worker is not None:
            ready, _, _ = select.select([self._take, worker.fileno()], [], [], POLL)
            if self._take in ready:
                break
            if ready:  # the worker returns the token before it leaves
                raise RuntimeError("the scoring worker left holding the claims' token")
            if worker.stopped():  # (SIGSTOP) it may hold the token for good
                raise RuntimeError("the scoring worker is stopped")
        os.read(self._take, 1)
        try:
            first, last = struct.unpack("qq", self._shared[:])
            if first >= last:
                return None
            part = first if front else last - 1
            self._shared[:] = struct.pack("qq", first + front, last - (not front))
            return part
        finally:
            os.write(self._give, b"t")

    def close(self) -> None:
        os.close(self._take)
        os.close(self._give)
        self._shared.close()


def in_runs(stream: ReplayStream, read: Callable[[ReplayStream], Any],
            worker_start: Callable[[], None] = lambda: None,
            worker_end: Callable[[], Any] = lambda: None
            ) -> tuple[list[tuple[int, Any]], Any] | None:
    """`read` each run of lines of `stream` (a stream whose header is all it has read;
    ReplayStream.cuts and .part), the runs claimed by this process from the front and by
    a forked worker from the back (`_Claims`): every (run index, result) in run order,
    and what `worker_end()` gave in the worker (`worker_start()` runs there first); None
    when either process raised or the worker failed in any way (it is then stopped)."""
    before = _identity(stream.path)
    cuts = stream.cuts(PARTS)
    claims = _Claims(len(cuts) - 1)

    def claimed(worker: Pending | None = None) -> list[tuple[int, Any]]:
        out = []
        while (i := claims.claim(worker is not None, worker)) is not None:
            out.append((i, read(stream.part(cuts[i], cuts[i + 1]))))
        return out

    def theirs() -> tuple[list[tuple[int, Any]], Any]:  # in the worker
        worker_start()
        runs = claimed()
        return runs, worker_end()

    worker = beside(theirs)
    try:
        mine = claimed(worker)
        found = worker.result()
    except Exception:  # noqa: BLE001 - the one-process run says which error is first
        found = None
    finally:  # (an interrupt stops the worker too; one whose result came is reaped)
        worker.cancel()
        claims.close()
    if _identity(stream.path) != before:  # each run was read by its own open of the path
        raise ReplayError(f"{stream.path}: the replay changed while it was scored (its "
                          "size, time or file changed); score it once nothing writes it")
    if found is None:
        return None
    return sorted(mine + found[0], key=lambda run: run[0]), found[1]


def _identity(path: Path) -> tuple[int, ...]:
    """What changes when a file is written, truncated or replaced."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


Run = tuple[list[Line], int, "tuple[int, Any] | None", bool]


def score_split(p: Any, stream: ReplayStream, path: str, fresh: Callable[[], Any]) -> Any:
    """Score every record of `stream` into pass `p` (vbw.score.stream.Pass), the runs of
    lines a forked worker claims by it (`in_runs`); returns the pass that holds the
    result (`p`, or one from `fresh()` when the run fell back to one process). Neither
    process reads the other's lines: each checks its own (ids unique within a run), and
    the parent merges the worker's states, numbers every line in file order, checks that
    no id is repeated anywhere, and takes the last end line."""
    def run(part: ReplayStream) -> Run:
        """A run's item lines (number within the run, id, timing), how many lines it
        holds, its end line (number, EndV1) if any, whether it ends in a torn line."""
        lines = _read(p, part)
        end = (part.end_line, part.end) if part.end is not None else None
        return lines, part.last_line - 1, end, part.torn_tail

    both = in_runs(stream, run, p.forked, p.state)  # the worker's pass, its own copy
    if both is None:  # an error in either process's lines, or the worker failed
        return _alone(fresh, stream, path)
    runs, state = both
    lines, before = [], 0
    for _, (part, count, end, torn) in runs:
        lines += [(n + before, item_id, s) for n, item_id, s in part]
        if end is not None:
            stream.end, stream.end_line = end[1], end[0] + before
        stream.torn_tail = stream.torn_tail or torn
        before += count
    if len({item_id for _, item_id, _ in lines}) != len(lines):  # an id in two runs
        return _alone(fresh, stream, path)
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
    mode=compare reads of a validbutwrong 0.1 replay, whose header lists no arms. Split
    as scoring is (`wanted`, `in_runs`); an error, an id in two runs or a failed worker
    reads the replay again in one process."""
    if wanted(path):
        stream = open_replay(path)
        both = in_runs(stream, _keys)
        stream.close()
        if both is not None:
            keys = set().union(*(k for _, (k, _) in both[0]))
            ids = [i for _, (_, run_ids) in both[0] for i in run_ids]
            if len(set(ids)) == len(ids):
                return keys
    return _keys(open_replay(path))[0]
