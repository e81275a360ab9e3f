"""The run modes (`mode=`), one module each, picked from the MODES registry.

Each mode is a class registered here by its own module (replay scoring: `auto` and
`replay`; `live`; `check`; `compare`; `merge`) with one `run(job) -> int`; what the front
door (vbw.cli.job.run) must refuse before any work is read from the mode's declared
traits, not from its name. A mode
module is imported only when the registry is first asked for a mode, so the modes that
generate import the live stack only inside their run.

How it works and why: docs/design.md, section vbw.modes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, NamedTuple, TextIO

from vbw.config import RunConfig
from vbw.registry import Registry
from vbw.task.arms import Arm
from vbw.task.runner import Task


class Selection(NamedTuple):
    """What a job scores or generates of one task: its arms and its first `n` items
    (None: all), decided once (vbw.modes.selection); `made_for`: with n None, the scored
    replay's own n, beyond which an item it lacks is not counted missing."""

    arms: list[Arm]
    n: int | None
    made_for: int | None = None


@dataclass(frozen=True)
class Job:
    """One run: its validated config, the selected tasks and each one's selection (made
    once, `selected[i]` for `tasks[i]`), where it writes and prints. `name` names the
    sweep job in a gate message (None outside a sweep)."""

    cfg: RunConfig
    tasks: list[Task]
    selected: list[Selection]
    out_dir: Path
    cwd: Path
    out: TextIO
    err: TextIO
    name: str | None = None

    def selection_of(self, task: Task) -> Selection:
        """The selection made for `task` (one of `tasks`)."""
        return self.selected[next(i for i, t in enumerate(self.tasks) if t is task)]

    def arms_of(self, task: Task) -> list[Arm]:
        """The arms selected for `task` (one of `tasks`)."""
        return self.selection_of(task).arms

    def n_of(self, task: Task) -> int | None:
        """How many of `task`'s first items are selected (None: all)."""
        return self.selection_of(task).n


class Mode(ABC):
    """A run mode; `name` is its `mode=` value. The traits below are what vbw.cli.job checks
    before running it."""

    name: ClassVar[str]
    reads_replays: ClassVar[bool] = False  # its input is the root `replays=[...]`
    generates: ClassVar[bool] = False  # it generates, so it may run one shard of a run
    one_task: ClassVar[str | None] = None  # why it refuses several tasks (None: it does not)

    @staticmethod
    @abstractmethod
    def run(job: Job) -> int:
        """Run the job.

        Args:
            job: the run's config, tasks, selected arms, folder and streams.
        Returns:
            The exit code: 0 ok, 1 a gate tripped.
        """

    @classmethod
    def only_reads(cls, cfg: RunConfig, tasks: list[Task], cwd: Path) -> bool:
        """Whether running these tasks only reads (no model is loaded, nothing is
        generated): such a run may be handed to another process (vbw.cli.warm_worker,
        vbw.modes.scoring) and show the same output.

        Args:
            cfg: the run's config.
            tasks: its loaded tasks.
            cwd: the folder relative paths start from.
        Returns:
            True when the run only reads; by default, when the mode does not generate.
        """
        return not cls.generates

    @classmethod
    def replay_to_score(cls, cfg: RunConfig, task: Task, cwd: Path) -> Path | None:
        """The replay, existing before the run, this mode would score for `task`: its
        header then decides the task's selection (vbw.modes.selection).

        Args:
            cfg: the run's config.
            task: one of its loaded tasks.
            cwd: the folder relative paths start from.
        Returns:
            The replay's path; by default None (the mode scores no existing replay).
        """
        return None


MODES: Registry[Mode] = Registry("mode", tag="name", group="vbw.modes", package="vbw.modes")


def only_reads(cfg: RunConfig, tasks: list[Task], cwd: Path) -> bool:
    """Whether the run `cfg.mode` names only reads (Mode.only_reads); False for a name no
    mode has (the run refuses it with the list of those that are)."""
    return cfg.mode in MODES and MODES.get(cfg.mode).only_reads(cfg, tasks, cwd)
