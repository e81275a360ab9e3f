"""mode=replay and mode=auto (the default): re-score a replay, `replay=PATH` or the one
recorded for task x model x engine. Where none is recorded, replay refuses in one line
and auto generates (vbw.modes.live), saying which it does in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ReplayError
from vbw.modes import MODES, Job, Mode
from vbw.modes.live import live_replay
from vbw.modes.scoring import score_tasks
from vbw.replay.io import bundled_key, engine_shown, no_replay_message
from vbw.resources import bundled
from vbw.task.runner import Task


def model_and_engine(cfg: RunConfig) -> tuple[str, str]:
    """What keys a recorded replay, as the backend kind says (BackendSettings.replay_key):
    the model's name and the engine (`<engine>-compact` under compact whitespace); for a
    server, the served model id (made safe as a folder name) and `server-<dialect>`."""
    return cfg.backend.replay_key(cfg.model, cfg.engine)


def recorded_key(cfg: RunConfig, task: Task) -> str:
    model, engine = model_and_engine(cfg)
    return f"{task.name} x {model} x {engine_shown(engine)}"


def _recorded(task: Task, cfg: RunConfig, cwd: Path) -> Path | None:
    """The recorded replay for task x model x engine: under `replays_dir` first (the
    user's), then among the bundled ones, so one sweep can mix both kinds of task."""
    key = bundled_key(task.name, *model_and_engine(cfg))
    for root in _replay_roots(cfg, cwd):
        if (root / key).is_file():
            return root / key
    return None


def _replay_roots(cfg: RunConfig, cwd: Path) -> list[Path]:
    roots = [bundled("replays")]
    if cfg.replays_dir:
        user = Path(cfg.replays_dir).expanduser()
        roots.insert(0, user if user.is_absolute() else cwd / user)
    return roots


def _given(cfg: RunConfig, cwd: Path) -> Path | None:
    """`replay=PATH`, relative to the folder vbw was started in."""
    if cfg.replay is None:
        return None
    p = Path(cfg.replay).expanduser()
    return p if p.is_absolute() else cwd / p


def _existing(cfg: RunConfig, task: Task, cwd: Path) -> Path | None:
    """`replay=PATH`, else the recorded replay (None: neither)."""
    return _given(cfg, cwd) or _recorded(task, cfg, cwd)


@MODES.register
class Replay(Mode):
    """Re-score only: no recorded replay is an error."""

    name = "replay"

    @staticmethod
    def run(job: Job) -> int:
        cfg, cwd = job.cfg, job.cwd

        def obtain(task: Task, task_dir: Path, err: TextIO) -> tuple[Path, str]:
            found = _existing(cfg, task, cwd)
            if found is None:
                raise ReplayError(no_replay_message(_replay_roots(cfg, cwd), task.name,
                                                    *model_and_engine(cfg)))
            return found, "replay"

        return score_tasks(job, obtain, only_reads=True)

    @classmethod
    def replay_to_score(cls, cfg: RunConfig, task: Task, cwd: Path) -> Path | None:
        """`replay=PATH`, else the recorded replay."""
        return _existing(cfg, task, cwd)


@MODES.register
class Auto(Mode):
    """Re-score the recorded replay when there is one, else generate."""

    name = "auto"

    @staticmethod
    def run(job: Job) -> int:
        cfg, cwd = job.cfg, job.cwd

        def obtain(task: Task, task_dir: Path, err: TextIO) -> tuple[Path, str]:
            given = _given(cfg, cwd)
            if given is not None:
                return given, "replay"
            found = _recorded(task, cfg, cwd)
            if found is not None:
                print(f"vbw: {task.name}: re-scoring the recorded replay {found} (mode=live "
                      "generates anew)", file=err)
                return found, "replay"
            return live_replay(task, job.arms_of(task), cfg, task_dir, err,
                               recorded_key(cfg, task)), "live"

        return score_tasks(job, obtain, only_reads=Auto.only_reads(cfg, job.tasks, cwd))

    @classmethod
    def only_reads(cls, cfg: RunConfig, tasks: list[Task], cwd: Path) -> bool:
        """Nothing to generate: a replay is given, or every task has a recorded one."""
        return _given(cfg, cwd) is not None or all(
            _recorded(task, cfg, cwd) is not None for task in tasks)

    @classmethod
    def replay_to_score(cls, cfg: RunConfig, task: Task, cwd: Path) -> Path | None:
        """`replay=PATH`, else the recorded replay (None: the task is generated)."""
        return _existing(cfg, task, cwd)
