"""mode=merge: join the shard replays of one live run (`replays=[...]`, files or folders)
into the run's replay, then score it as the run done in one job. The package holds all
of it: checking the shards make one run (`shards`), joining their lines in task order
(`joined`), and writing the merged replay while scoring its records (`write`, with
vbw.score.written), so the merged replay is written, not read back."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from vbw.modes import MODES, Job, Mode
from vbw.modes.scoring import Obtained, score_tasks
from vbw.report.browser import SHOWING
from vbw.score.stream import Pass
from vbw.score.written import Written
from vbw.modes.merge.write import merge_and_score
from vbw.task.runner import Task


@MODES.register
class Merge(Mode):
    """Merge, then score over the merged run's own selection (its header's n)."""

    name = "merge"
    reads_replays = True
    one_task = "joins the shards of one task"

    @staticmethod
    def run(job: Job) -> int:
        cfg = job.cfg

        def obtain(task: Task, task_dir: Path, err: TextIO) -> Obtained:
            arms = job.arms_of(task)
            path = task_dir / "replay.jsonl"  # where merge_and_score writes it

            def scoring(n: int) -> Written:  # the pass scoring over the run's n items makes
                return Written(Pass(task, task.ids(n), arms, showing=SHOWING, answers=True),
                               str(path))

            found, written = merge_and_score(task, cfg.replays, cfg.n, job.cwd, task_dir,
                                             scoring)
            return Obtained(found, "replay", written)

        return score_tasks(job, obtain, whole_run=True)
