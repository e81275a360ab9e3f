"""mode=check: every task's checks, the first item's prompts, schema and gold; nothing
is generated or scored."""

from __future__ import annotations

from vbw.errors import ConfigError
from vbw.modes import MODES, Job, Mode
from vbw.report.checkup import render_check
from vbw.task.audit import audit
from vbw.task.findings import Audit, first_error


def check_tasks(job: Job) -> int:
    """mode=check: every task's checks, the first item's prompts, schema and gold, and the
    header line a replay of its selected arms made elsewhere carries (its task hash and
    arm keys). It fails (exit 2) on a problem and on a finding that holds on every item."""
    failed: list[Audit] = []
    for task in job.tasks:
        items = task.items(job.n_of(task))
        result = audit(task, items)
        print(render_check(task, items[0] if items else None, result, job.arms_of(task)),
              file=job.out)
        if result.check_problems:
            failed.append(result)
    if failed:
        raise ConfigError(first_error(failed[0], check_mode=True))
    return 0


@MODES.register
class Check(Mode):
    name = "check"

    @staticmethod
    def run(job: Job) -> int:
        return check_tasks(job)
