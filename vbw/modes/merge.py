"""mode=merge: join the shard replays of one live run (`replays=[...]`, files or folders)
into the run's replay (vbw.sweep.shards), then score it as the run done in one job."""

from __future__ import annotations

from vbw.modes import MODES, Job, Mode
from vbw.modes.scoring import score_tasks
from vbw.sweep.shards import merged_replay


@MODES.register
class Merge(Mode):
    """Merge, then score over the merged run's own selection (its header's n)."""

    name = "merge"
    reads_replays = True
    one_task = "joins the shards of one task"

    @staticmethod
    def run(job: Job) -> int:
        return score_tasks(job, lambda task, task_dir, out: (
            merged_replay(task, job.cfg.replays, job.cfg.n, job.cwd, task_dir), "replay"),
            whole_run=True)
