"""Scoring a replay's records as they are written, so the file is not read again.

mode=merge writes the merged replay, then scores it: a second pass that decodes every
line it has just written and builds every item again. Instead, the processes that make
the merged lines (vbw.modes.merge.write) hand each record, in its decoded form, to a
`Written`: the scoring pass of vbw.score.stream, fed what a `ReplayStream` would have
read from that line (vbw.replay.record.scored_record), with the line's number, id and
timing kept for the file order. A forked writer sends its `state()` back; the parent
`merge`s it, and `finish` gives the pass that `score_stream(given=...)` completes: the
same checks, in the same order, on the same arrays, so the report is the one of scoring
the written file (tests/score/test_written.py compares the two passes).

Anything that goes wrong on the way (an error in either process, a state that does not
arrive) drops the written pass: the file is then scored by reading it, as before.
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
