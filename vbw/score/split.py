"""Scoring a large replay on two cores: a forked worker scores every other item line.

Scoring is pure-Python work per item (building it from its task row, the task checks,
each arm's answer, validity and correctness), independent across items, so a second
process halves it. The parent reads and checks every line as before (so every error, and
its order of precedence, is the one-process run's), and scores the item lines at even
indexes; a worker forked after the replay was opened reads the same file on its own and
scores the odd ones. The worker sends back what its pass gathered (the per-item arrays,
exclusions, the first unbuildable row or lacking arm, the task checks' state), which the
parent merges: every figure is a function of the (item, arm) arrays and of the checks'
counts and first evidence by position, so the report is byte for byte the one-process
run's (tests/score/test_split.py compares every output file).

Used when the replay holds at least SPLIT_BYTES, the machine has two cores and `os.fork`
exists; VBW_SCORING_PROCESSES=1 in the environment keeps scoring in one process, =2 splits
any replay (the tests' way to run it on small ones). If the worker fails in any way the
parent scores its lines itself.
"""

from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path
from typing import Any

from vbw.replay.stream import ReplayStream, open_replay

SPLIT_BYTES = 4 << 20  # below this the fork and the merge cost more than they save
ENV = "VBW_SCORING_PROCESSES"


def wanted(path: Path) -> bool:
    """Whether to score this replay in two processes: VBW_SCORING_PROCESSES=1 never, =2
    always (where os.fork exists), unset when the replay is large and there are two
    cores."""
    setting = os.environ.get(ENV, "").strip()
    if setting == "1" or not hasattr(os, "fork"):
        return False
    if setting == "2":
        return True
    if (os.cpu_count() or 1) < 2:
        return False
    try:
        return path.stat().st_size >= SPLIT_BYTES
    except OSError:
        return False


def _mine(lineno: int) -> bool:
    """The parent's item lines: even indexes among the lines after the header."""
    return (lineno - 2) % 2 == 0


def _worker(p: Any, path: Path, out: int) -> None:
    """In the forked child: score the odd item lines, send the pass's state, exit."""
    status = 1
    try:
        for lineno, rec in open_replay(path).items():
            if not _mine(lineno):
                p.add(rec, str(path), timed=False)
        data = pickle.dumps(p.state(), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(out, view):]
        status = 0
    except BaseException:  # noqa: BLE001  (the parent scores these lines itself)
        pass
    finally:
        os._exit(status)  # no atexit handlers, no buffers flushed: the parent owns those


def _receive(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def score_split(p: Any, stream: ReplayStream, path: str) -> None:
    """Feed every record of `stream` to pass `p` (vbw.score.stream._Pass), the odd item
    lines scored by a forked worker into a copy of `p` and merged back."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read)
        _worker(p, stream.path, write)
    os.close(write)
    done = False
    try:
        for lineno, rec in stream.items():
            if _mine(lineno):
                p.add(rec, path)
            else:
                p.note(rec)  # its timing and whether its id is the task's; scored there
        data = _receive(read)
        _, status = os.waitpid(pid, 0)
        done = True
        if os.waitstatus_to_exitcode(status) == 0 and data:
            p.merge(pickle.loads(data))
        else:  # the worker failed: score its lines here
            for lineno, rec in open_replay(stream.path).items():
                if not _mine(lineno):
                    p.add(rec, path, timed=False)
    finally:
        os.close(read)
        if not done:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
