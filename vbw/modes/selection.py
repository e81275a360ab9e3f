"""Each task's selection in a job (its arms and its first `n` items), decided once,
before any mode runs.

Where the mode scores a replay that exists before the run (`replay=PATH`, or the one
recorded: Mode.replay_to_score), its header decides what the command line leaves open:
its `arms` are scored unless the command line selects arms, and with `n` null the items
it lacks past its `n` are not missing: it re-scores with no setting repeated. What the
command line selects and the replay cannot give is one line: arms it does not hold are
refused; an `n` beyond its `n` is scored, what it lacks missing. Arms it holds that are
not scored are named in one warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ReplayError
from vbw.modes import Selection
from vbw.replay.header import ReplayHeader
from vbw.replay.stream import open_replay
from vbw.task.arms import ALL_ARM_KINDS, Arm, task_arms
from vbw.task.runner import Task


def select(cfg: RunConfig, task: Task, replay: Path | None, arms_given: bool,
           err: TextIO, first_given: bool = False) -> Selection:
    """`task`'s selection: the config's, with what `replay`'s header records where the
    command line leaves it open (`arms_given`: it selects arms): its arms, and its n as
    `made_for` when n is null (every item held is scored; those it lacks past its n are
    not missing).

    Args:
        cfg: the run's config.
        task: one of its tasks.
        replay: the existing replay the mode will score for it (None: none).
        arms_given: the command line selects arms (`arms=`, `arms.kinds=`, `arms.schemas=`).
        err: where the warning and the note go.
        first_given: the command line sets the task's `first` (`task.dataset.first=`):
            every item it selects counts, not only those within the header's n.
    Returns:
        The task's arms, n and made_for.
    """
    configured = cfg.arms.select(task.name, task.schema_names, task.spec.answer_schema)
    header = _header(replay, task)
    if replay is None or header is None:
        return Selection(configured, cfg.n)
    arms = configured if header.arms is None else \
        _arms(configured, header.arms, task, replay, arms_given, err)
    made_for = header.shard.of if header.shard is not None else header.n  # the run's
    if cfg.n is None:  # every item it holds is scored; those it lacks past its n are not missing
        return Selection(arms, None, None if first_given else made_for)
    return Selection(arms, _n(cfg.n, made_for, replay, err))


def _header(replay: Path | None, task: Task) -> ReplayHeader | None:
    """The replay's header, when it names this task (another task's replay is refused,
    in its own words, when it is scored)."""
    if replay is None:
        return None
    stream = open_replay(replay)
    stream.close()
    named = (stream.header.task or "").replace("-", "_")
    return stream.header if named == task.name.replace("-", "_") else None


def _arms(configured: list[Arm], held: list[str], task: Task, path: Path, arms_given: bool,
          err: TextIO) -> list[Arm]:
    if arms_given:
        lacking = [a.key for a in configured if a.key not in held]
        if lacking:
            raise ReplayError(
                f"{path}: the arms selected on the command line include "
                f"{', '.join(lacking)}, which the replay does not hold (its meta.arms: "
                f"{', '.join(held)}); drop the arms override to score the arms it holds")
        arms = configured
    else:
        arms = [a for a in _every_arm(task) if a.key in held]
        if not arms:
            raise ReplayError(
                f"{path}: meta.arms lists no arm of task {task.name} ({', '.join(held)}; "
                f"its arms: {', '.join(a.key for a in _every_arm(task))})")
    _warn_unscored(arms, held, task, path, arms_given, err)
    return arms


def _every_arm(task: Task) -> list[Arm]:
    return task_arms(task.schema_names, task.spec.answer_schema, list(ALL_ARM_KINDS))


def _warn_unscored(arms: list[Arm], held: list[str], task: Task, path: Path,
                   arms_given: bool, err: TextIO) -> None:
    """One line naming the arms the replay holds that this run does not score, and why."""
    scored = {a.key for a in arms}
    its = {a.key for a in _every_arm(task)}
    unselected = [k for k in held if k not in scored and k in its]
    foreign = [k for k in held if k not in its]
    why = []
    if unselected and arms_given:
        why.append(f"{', '.join(unselected)} (not selected by the arms override; drop it to "
                   "score every arm the replay holds)")
    if foreign:
        why.append(f"{', '.join(foreign)} (not an arm of task {task.name})")
    if why:
        print(f"vbw: warning: {path} holds arm(s) this run does not score: "
              f"{'; '.join(why)}", file=err)


def _n(n: int, made_for: int | None, path: Path, err: TextIO) -> int:
    """`n`, given; beyond the replay's own n, said in one line."""
    if made_for is not None and n > made_for:
        print(f"vbw: note: n={n}, but {path} was made for n={made_for} (meta.n): scoring "
              f"the task's first {n} items, those it lacks reported missing", file=err)
    return n
