"""Scoring a large replay on two cores: a forked worker scores the second half of the file.

Scoring is pure-Python work per item (building it from its task row, the task checks,
each arm's answer, validity and correctness), independent across items, so a second
process halves it. The file's bytes after the header are cut in two at a line's start
(ReplayStream.middle): this process reads the lines before the cut, a worker forked
after the header was read opens the file at the cut and reads the rest, so neither
reads, let alone decodes, a line of the other's. The worker sends back what its pass
gathered (the per-item arrays, exclusions, the first unbuildable row or lacking arm, the
task checks' state) and each of its lines' number (counted from the cut: the parent
numbers them on from its own last line), id and timing, which the parent merges: every
figure is a function of the (item, arm) arrays and of the checks' counts and first
evidence by position, the timings and the ids the task does not select are put back in
file order, so the report is byte for byte the one-process run's
(tests/score/test_split.py compares every output file).

mode=compare's passes split the same way: their task checks are shared by the replays
(each item checked once, vbw.score.stream.SharedAudit), so the worker gathers its own
checks afresh and the parent adds them and the items they covered to the shared ones.

Errors keep the one-process run's words and order without either process reading the
other's lines: a line that fails in either process (bad JSON, the item-line model, an
unlisted arm, a repeated id among its lines, a prompt over its budget), an id that
appears in both halves, or a worker that fails in any other way makes the parent score
the replay again in one process from its first line, which raises the first error in
file order (or, for a failed worker, scores its lines). A valid replay never pays that
second pass; a broken one pays it at most once, so scoring stays linear.

Used when the replay holds at least SPLIT_BYTES, the machine has two cores and `os.fork`
exists; VBW_SCORING_PROCESSES=1 in the environment keeps scoring in one process, =2 splits
any replay (the tests' way to run it on small ones).
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Callable
from typing import Any

from vbw.pipes import beside
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


def _mine(lineno: int) -> bool:
    """arm_keys' split of the lines: the parent's are the even indexes after the header."""
    return (lineno - 2) % 2 == 0


def _theirs(lineno: int) -> bool:
    return not _mine(lineno)


Line = tuple[int, str, "float | None"]  # an item line: (line number, id, item seconds)


def _read(p: Any, stream: ReplayStream, path: str) -> list[Line]:
    """Score the stream's item lines into pass `p`; each one's number, id, timing."""
    lines = []
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


def score_split(p: Any, stream: ReplayStream, path: str, fresh: Callable[[], Any]) -> Any:
    """Score every record of `stream` into pass `p` (vbw.score.stream.Pass), the second
    half of the item lines by a forked worker; returns the pass that holds the result
    (`p`, or one from `fresh()` when the run fell back to one process). Neither process
    reads the other's lines: each checks its own (ids unique among them), and the parent
    merges the worker's states, line ids and timings (numbered on from its own last
    line), checks that no id is repeated across the two, and takes the end marker of
    the later line."""
    middle = stream.middle()

    def theirs() -> dict[str, Any]:  # in the worker, on its copy of `p`
        p.forked()
        own = open_replay(stream.path, start=middle)
        lines = _read(p, own, path)
        return {"state": p.state(), "lines": lines, "end": (own.end_line, own.end),
                "torn": own.torn_tail}

    def mine() -> list[Line]:
        stream.read_until(middle)
        return _read(p, stream, path)

    both = in_two(mine, theirs)
    if both is None:  # an error in either process's lines, or the worker failed
        return _alone(fresh, stream, path)
    lines, found = both
    before = stream.last_line - 1  # the worker numbered its lines from 2
    lines += [(n + before, item_id, s) for n, item_id, s in found["lines"]]
    if len({item_id for _, item_id, _ in lines}) != len(lines):  # an id in both halves
        return _alone(fresh, stream, path)
    p.merge(found["state"])
    p.note_all(lines)
    end_line, end = found["end"]
    if end is not None:
        stream.end, stream.end_line = end, end_line + before
    stream.torn_tail = stream.torn_tail or found["torn"]
    return p


def _keys(path: Path, skip: Callable[[int], bool] | None) -> tuple[set[str], list[str]]:
    keys: set[str] = set()
    ids = []
    for _, rec in open_replay(path).items(skip=skip):
        keys.update(rec.texts)
        ids.append(rec.id)
    return keys, ids


def arm_keys(path: Path) -> set[str]:
    """Every arm key the item lines of `path` hold, each line checked as
    `ReplayStream.records()` checks it (the first error in file order is raised): what
    mode=compare reads of a validbutwrong 0.1 replay, whose header lists no arms. Split
    as scoring is (`wanted`); an error, an id in both halves or a failed worker reads
    the replay again in one process."""
    if wanted(path):
        both = in_two(lambda: _keys(path, _theirs), lambda: _keys(path, _mine))
        if both is not None:
            (keys, ids), (more, their_ids) = both
            if set(ids).isdisjoint(their_ids):
                return keys | more
    return _keys(path, None)[0]
