"""mode=live: check the task, find the model, generate a replay, then score it.

The live stack (vbw.generate) is imported inside `live_replay` only, so importing the
modes, and scoring a replay, never loads it. `auto` generates through `live_replay` too
when no replay is recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import VbwError
from vbw.modes import MODES, Job, Mode
from vbw.modes.scoring import score_tasks
from vbw.task.arms import Arm
from vbw.task.audit import audit_or_fail
from vbw.task.runner import Task


def live_replay(task: Task, arms: list[Arm], cfg: RunConfig, task_dir: Path, err: TextIO,
                unrecorded: str | None = None) -> Path:
    """Check the task, find the model, then generate the task's `arms`. `unrecorded`
    (auto mode) names the task x model x engine without a replay: announced once the run
    can start, and put in front of any error that stops it from starting."""
    from vbw.generate.live import check_runnable, generate  # the live stack, when asked for
    from vbw.generate.providers import prepare

    items = task.items(cfg.n)
    audit_or_fail(task, items, None)  # its warnings are printed once, when scoring
    try:
        check_runnable(arms, cfg.backend, cfg.batch.sequences)  # refused before the model
        model = prepare(cfg.backend, cfg.model)
    except VbwError as e:
        if unrecorded is None:
            raise
        raise type(e)(f"no recorded replay for {unrecorded}, and live generation cannot "
                      f"start: {e}") from None
    if unrecorded is not None:
        print(f"vbw: no recorded replay for {unrecorded}: generating live; mode=replay only "
              "re-scores", file=err)
    return generate(task, items, arms, cfg, task_dir, model, err=err)


@MODES.register
class Live(Mode):
    """Generate every task's replay (into `replay=` when given, to resume it), then score."""

    name = "live"
    generates = True

    @staticmethod
    def run(job: Job) -> int:
        return score_tasks(job, lambda task, task_dir, out: (
            live_replay(task, job.arms_of(task), job.cfg, task_dir, job.err), "live"))
