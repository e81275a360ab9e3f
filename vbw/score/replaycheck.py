"""Whether a replay belongs to the task it is scored with: its task name and hash, and
the ids it holds against the ones selected (vbw.score.stream)."""

from __future__ import annotations

from typing import TextIO

from vbw.errors import ReplayError
from vbw.replay.stream import ReplayStream
from vbw.score.results import TaskMismatch
from vbw.task.findings import first_ids
from vbw.task.runner import Task


def _same_task(a: str | None, b: str) -> bool:
    return a is not None and a.replace("-", "_") == b.replace("-", "_")


def check_replay_matches(replay: ReplayStream, task: Task,
                         allow_mismatch: bool) -> TaskMismatch | None:
    """The replay is of this task; with a recorded task hash, of this version of it (a
    replay without one is scored, and its report says the version was not verified).
    Returns the mismatch `allow_mismatch` let through (None: none)."""
    header = replay.header
    if not _same_task(header.task, task.name):
        raise ReplayError(f"{replay.path}: meta.task is {header.task!r}, not {task.name!r}")
    if header.task_hash is None or header.task_hash == task.generation_hash():
        return None
    if not allow_mismatch:
        raise ReplayError(f"{replay.path}: meta.task_hash differs from task {task.path} (its "
                          "prompts, schemas or data changed since generation); pass "
                          "allow_task_mismatch=true to score it anyway")
    return TaskMismatch(replay_task_hash=header.task_hash, task_hash=task.generation_hash())


def check_ids(task: Task, selected: list[str], held: list[bool], stray: list[str],
              path: str, records: int, err: TextIO) -> list[str]:
    """Replay ids the task does not have (`stray`, beyond the selection) are an error
    unless `n`/`first` explains them; selected items not `held` are a warning. Returns the
    missing ids."""
    if stray:
        everywhere = set(task.ids(None, all_rows=True))
        unknown = [i for i in stray if i not in everywhere]
        if unknown:
            raise ReplayError(f"{path}: {len(unknown)} item id(s) are not in task "
                              f"{task.name} ({task.path}): {first_ids(unknown, quote=True)}; "
                              "the replay belongs to other data, or its ids were changed")
    missing = [i for i, h in zip(selected, held) if not h]
    if len(missing) == len(selected):
        raise ReplayError(f"{path}: no item of task {task.name} can be scored (the "
                          f"replay holds {records} item(s), none of the {len(selected)} "
                          "selected)")
    if missing:
        print(f"vbw: warning: {len(missing)} of {len(selected)} task item(s) are not in "
              f"{path}: {first_ids(missing, quote=True)}; scoring the "
              f"{len(selected) - len(missing)} it holds", file=err)
    return missing
