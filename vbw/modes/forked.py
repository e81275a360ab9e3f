"""Scoring a run's tasks on two cores: a forked child scores and writes the second half of
the tasks while this process does the first half.

Why: `vbw` with no arguments (the demo) scores two tasks one after the other, and each is
a pure function of its replay and its task: reading and scoring the items, report.html's
item data, rendering and writing the files. That is most of the run after start-up (issue
22: the demo within 2x the time a fresh interpreter takes to import the dependencies). A
child forked once the imports and the composition are done shares them for free, so on a
2-core machine the tasks overlap.

What the one-process run shows is kept exactly (tests/modes/test_forked.py compares
stdout, stderr, exit codes and every file against VBW_SCORING_PROCESSES=1):
- Output: the child writes nothing to this process's streams. What its tasks print, to
  stdout and stderr, is recorded in order and replayed here after this process's own
  tasks, so the text and its order are the sequential run's.
- Errors: the first failing task in task order wins. If a task of this process fails, the
  child is killed and the task folders it made are removed (it writes freely only into
  folders that did not exist when it was forked; if one did, it waits for this process's
  go before it writes anything), and the error goes on up. If a child's task fails in any
  way (an error, a bug, a crash), its record is dropped and this process runs that task
  and the ones after it itself, so the error line, the traceback and the exit code are the
  sequential run's. The child stops at its first failing task, as the sequential run does.
- The child never returns into its caller: it leaves with vbw.pipes.leave (no atexit handlers, no
  Hydra clean-up, no buffered output flushed twice). This process reads the child's
  result until the pipe closes, which happens when the child exits, however it exits, so
  a crashed child cannot leave it waiting.

Not used (the tasks run one after another here) with fewer than two tasks, where os.fork
does not exist, on one core, while other threads run (a fork copies only the calling
thread, and a lock another thread holds would never be released in the child), when the
mode may generate (the caller says so: a live run holds a model and a replay being
written), or with VBW_SCORING_PROCESSES=1 in the environment (vbw.score.split's knob:
=1 keeps all scoring in one process; =2 forks even on one core, the tests' way).
"""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from vbw.score import split
from vbw.pipes import Event, Recorder, fork, leave, receive_all, replay, send_all, stop
from vbw.score.split import ENV

K = TypeVar("K")  # a task (vbw.task.runner.Task)
T = TypeVar("T")
# (task, out, err, before_write) -> what the caller keeps of the task (picklable);
# before_write() is called before the task's first change to the file system
TaskRun = Callable[[K, TextIO, TextIO, Callable[[], None]], T]
GO = b"g"


def wanted(n_tasks: int, forkable: bool) -> bool:
    """Whether to run the tasks in two processes (see the docstring)."""
    if not forkable or n_tasks < 2 or not hasattr(os, "fork"):
        return False
    setting = os.environ.get(ENV, "").strip()
    if setting == "1" or threading.active_count() > 1:
        return False
    return setting == "2" or (os.cpu_count() or 1) >= 2


def _nothing() -> None:
    pass


def _child(tasks: list[Any], run: TaskRun[Any, Any], result: int, go: int | None) -> None:
    """In the forked child: run the tasks in order, recording what they print, until one
    fails; send [(events, value)] of those done; exit without returning."""
    code = 1
    try:
        events: list[Event] = []
        out, err = Recorder(events, "out"), Recorder(events, "err")
        sys.stdout, sys.stderr = out, err  # anything printed without a stream is kept too
        released = go is None

        def before_write() -> None:
            nonlocal released
            if not released:
                if os.read(go, 1) != GO:  # type: ignore[arg-type]  (the parent gave up)
                    raise RuntimeError("not released")
                released = True

        done = []
        for task in tasks:
            start = len(events)
            try:
                value = run(task, out, err, before_write)
            except BaseException:  # noqa: BLE001  the parent runs it again, to fail there
                break
            done.append((events[start:], value))
        send_all(result, pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    except BaseException:  # noqa: BLE001  the parent runs every task it lacks
        pass
    finally:
        leave(code)


def _flush(*streams: TextIO) -> None:
    """Flush before forking, so nothing buffered is written twice."""
    for s in streams:
        try:
            s.flush()
        except (OSError, ValueError):
            pass


def _stop(pid: int, made: list[Path]) -> None:
    """Kill the child, reap it, and remove the task folders it made."""
    stop(pid)
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def run_tasks(tasks: list[K], run: TaskRun[K, T], folder: Callable[[K], Path],
              out: TextIO, err: TextIO, forkable: bool) -> list[T]:
    """`run` every task (in task order as far as anyone can tell) and return its values;
    `folder(task)` is where the task writes; `forkable`: the mode's tasks only read their
    replays (it generates nothing)."""
    if not wanted(len(tasks), forkable):
        return [run(task, out, err, _nothing) for task in tasks]
    half = (len(tasks) + 1) // 2
    mine, theirs = tasks[:half], tasks[half:]
    fresh = [f for f in (folder(t) for t in theirs) if not f.exists()]
    wait = len(fresh) < len(theirs)  # it would overwrite: no writing before our go
    _flush(out, err, sys.stdout, sys.stderr)
    result_r, result_w = os.pipe()
    go_r, go_w = os.pipe()
    try:
        pid = fork()
    except OSError:  # no process to be had (a limit): one process, as without fork
        for fd in (result_r, result_w, go_r, go_w):
            os.close(fd)
        return [run(task, out, err, _nothing) for task in tasks]
    split.cores_taken = True  # each side scores its replays in one process
    if pid == 0:
        os.close(result_r)
        os.close(go_w)
        _child(theirs, run, result_w, go_r if wait else None)
    os.close(result_w)
    os.close(go_r)
    values: list[T] = []
    try:
        try:
            values += [run(task, out, err, _nothing) for task in mine]
            try:
                os.write(go_w, GO)
            except BrokenPipeError:  # the child is gone: its tasks are run below
                pass
            data = receive_all(result_r)
            _, status = os.waitpid(pid, 0)
        except BaseException:
            _stop(pid, [f for f in fresh if f.exists()])
            raise
    finally:
        split.cores_taken = False
        os.close(result_r)
        os.close(go_w)
    done: list[tuple[list[Event], T]] = []
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            done = pickle.loads(data)
        except Exception:  # noqa: BLE001  a broken record: run its tasks here
            done = []
    for events, value in done:
        replay(events, out, err)
        values.append(value)
    values += [run(task, out, err, _nothing) for task in theirs[len(done):]]
    return values
