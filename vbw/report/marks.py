"""Interventions marked in place in report.html's texts.

For an enforced arm whose record has interventions, each one becomes a Mark: where its
forced token sits in the embedded text (UTF-16 units of `Cut.s`, as JavaScript counts),
what the model wanted and what was forced, both probabilities (vbw.report.numbers), the
margin `lp_wanted - lp_forced` (the item list sorts by the largest) and where it landed
(vbw.score.landing). The page puts every string with textContent.

How it works and why: docs/design.md, section vbw.report.marks.
"""

from __future__ import annotations

from bisect import bisect_left

from pydantic import BaseModel, ConfigDict

from vbw.report.numbers import prob
from vbw.score.shown import ShownArm

# with MAX_TOKEN_CHARS: ~15 kB per arm at most, like one 20,000-char text (the scoring
# pass keeps as many: vbw.report.browser.SHOWING)
MAX_MARKS = 100
MAX_TOKEN_CHARS = 40


class Mark(BaseModel):
    model_config = ConfigDict(extra="forbid")
    at: int          # UTF-16 offset in the embedded text
    n: int           # UTF-16 length (0: an end-of-generation token)
    wanted: str
    forced: str
    pw: str          # the probabilities, formatted
    pf: str
    margin: float    # lp_wanted - lp_forced
    where: str       # structure, key or value
    answer: bool | None = None


class ArmMarks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    marks: list[Mark]
    iv: int            # interventions on this arm
    iv_answer: int | None  # of them in the answer value; None: path not locatable
    iv_max: float | None   # the largest margin; None: no intervention


def _token(s: str) -> str:
    return s if len(s) <= MAX_TOKEN_CHARS else s[:MAX_TOKEN_CHARS] + "…"


class _Units:
    """Code-point offsets of the full text -> UTF-16 offsets in its embedded cut (`kept`:
    the text as vbw.score.shown.clip keeps it, of `length` characters)."""

    def __init__(self, kept: str, length: int, limit: int) -> None:
        self.length, self.limit = length, limit
        self.head = limit // 2
        self.omitted = max(0, length - limit)
        self.astral = [] if kept.isascii() else \
            [i for i, ch in enumerate(kept) if ord(ch) > 0xFFFF]

    def at(self, i: int) -> int | None:
        """Offset in the cut's UTF-16 units, or None if i lies in the omitted part."""
        i = min(max(i, 0), self.length)
        if self.omitted:
            if i >= self.head + self.omitted:
                i -= self.omitted
            elif i > self.head:
                return None
        return i + bisect_left(self.astral, i)


def arm_marks(arm: ShownArm, limit: int) -> ArmMarks:
    """The marks of one arm's text, from what the scoring pass kept of it and its
    interventions (vbw.score.shown.Marked: the strongest, at most MAX_MARKS); `limit` is
    the cut's."""
    kept = arm.marks
    assert kept is not None
    events, landings, length = kept.events, kept.landings, arm.length
    units = _Units(arm.text or "", length, limit)
    marks: list[Mark] = []
    last = 0
    for k in sorted(range(len(events)), key=lambda k: events[k].char):
        e = events[k]
        start = max(min(e.char, length), last)
        end = max(min(e.char + len(e.forced), length), start)
        a, b = units.at(start), units.at(end)
        if a is None or b is None:
            continue
        last = end
        marks.append(Mark(at=a, n=b - a, wanted=_token(e.wanted), forced=_token(e.forced),
                          pw=prob(e.lp_wanted), pf=prob(e.lp_forced),
                          margin=e.lp_wanted - e.lp_forced, where=landings[k].where,
                          answer=landings[k].answer))
    return ArmMarks(marks=marks, iv=kept.iv, iv_answer=kept.iv_answer, iv_max=kept.iv_max)
