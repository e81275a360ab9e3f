"""The task checks shared by the replays mode=compare scores: each item checked once."""

from __future__ import annotations

import numpy as np

from vbw.errors import ConfigError
from vbw.task.audit import Auditor, audit
from vbw.task.findings import Audit, first_error
from vbw.task.runner import Item, Task


class SharedAudit:
    """The task checks over the items of several replays, each item once, in task order
    however the replays hold them: what `audit` gives on the union of their items."""

    def __init__(self, task: Task, n: int | None) -> None:
        self.task, self.n = task, n
        self.auditor = Auditor(task)
        self.seen = np.zeros(len(task.ids(n)), dtype=bool)

    def add(self, item: Item, pos: int) -> None:
        if not self.seen[pos]:
            self.seen[pos] = True
            self.auditor.add(item, pos)

    def result(self) -> Audit:
        """The Audit; a problem stops the run, in the words `audit` finds in task order."""
        result = self.auditor.result()
        if result.problems:
            selected = self.task.ids(self.n)
            held = {selected[i] for i in np.flatnonzero(self.seen)}
            raise ConfigError(first_error(audit(self.task, self.task.items(self.n,
                                                                           only=held))))
        return result
