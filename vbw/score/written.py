"""Scoring a replay's records as they are written, so the file is not read again.

How it works and why: docs/design.md, section vbw.score.written.
"""

from __future__ import annotations

from typing import Any

from vbw.replay.format import EndV1
from vbw.replay.record import scored_record
from vbw.score.stream import Pass
from vbw.task.runner import Item

Line = tuple[int, str, "float | None"]  # (line number, id, item seconds)


class Written:
    """The scoring pass over the records of the replay being written to `path`; the
    replay's end line, once known (`end`)."""

    def __init__(self, p: Pass, path: str) -> None:
        self.p, self.path = p, path
        self.lines: list[Line] = []
        self.end: EndV1 | None = None

    def add(self, rec: dict[str, Any], lineno: int, item: Item | None = None) -> None:
        """Score a record written as line `lineno` (`item`: its task item, if built)."""
        r = scored_record(rec)
        self.p.add(r, self.path, timed=False, item=item)
        self.lines.append((lineno, r.id, r.item_seconds))

    def state(self) -> dict[str, Any]:
        """What this process scored, for `merge` into the pass of the process writing."""
        return {"state": self.p.state(), "lines": self.lines}

    def merge(self, found: dict[str, Any]) -> None:
        self.p.merge(found["state"])
        self.lines.extend(found["lines"])

    def finish(self, end: EndV1 | None) -> Pass:
        """The pass, every record noted in file order; `end`: the end line written."""
        self.p.note_all(sorted(self.lines))
        self.end = None if end is None else EndV1.model_validate(end.model_dump(mode="json"))
        return self.p
