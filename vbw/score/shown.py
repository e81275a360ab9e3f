"""What the reports show of an item, kept by the scoring pass while it holds the item.

report.html details the first items in task order (their texts, prompts, gold, answers
and where each was read) and lists many more by their finish reasons. The scoring pass
has each of them decoded and built already, so it keeps that (`Shown`, and each arm's
finish reasons) for the lowest positions it holds (`Lowest`): the reports then neither
read the replay again nor call the task. May import vbw.task and vbw.replay.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, NamedTuple

from vbw.score.landing import Landing, Step, classify
from vbw.task.arms import Arm
from vbw.task.extract import Extracted
from vbw.task.fields import RIGHT, WRONG
from vbw.task.kinds import Part
from vbw.task.runner import Item, Task


class Showing(NamedTuple):
    """What a pass keeps for the reports: the finish reasons of the first `listed` items
    it holds, the `Shown` of the first `detailed`, their texts clipped to `limit` and of
    each arm's interventions the `marks` strongest (`Marked`)."""

    listed: int = 0
    detailed: int = 0
    limit: int = 0
    marks: int = 0


class Lowest:
    """Values by position, at most `cap` of them: those at the lowest positions offered.
    Merged from another pass's `state()` (vbw.score.tally: Combine.NESTED)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.items = cap, {}
        self._heap: list[int] = []  # the kept positions, negated: the highest on top

    def wants(self, pos: int) -> bool:
        return len(self.items) < self.cap or (self.cap > 0 and pos < -self._heap[0])

    def put(self, pos: int, value: Any) -> None:
        """Keep `value` at `pos` (which `wants`), dropping the highest beyond `cap`."""
        if pos not in self.items:
            heappush(self._heap, -pos)
        self.items[pos] = value
        if len(self.items) > self.cap:
            del self.items[-heappop(self._heap)]

    def state(self) -> dict[int, Any]:
        return self.items

    def merge(self, theirs: dict[int, Any]) -> None:
        for pos, value in theirs.items():
            if self.wants(pos):
                self.put(pos, value)


class Event(NamedTuple):
    """An intervention as the page marks it (vbw.replay.format.Intervention's fields)."""

    char: int
    wanted: str
    forced: str
    lp_wanted: float
    lp_forced: float


class Marked(NamedTuple):
    """An arm's interventions as the page marks them: the strongest (the largest
    lp_wanted - lp_forced; in recorded order) with where each landed, and the counts
    over every one: how many, how many in the answer value (None: the path is not
    locatable), the largest margin."""

    events: list[Event]
    landings: list[Landing]
    iv: int
    iv_answer: int | None
    iv_max: float | None


def marked(text: str, events: list[Event], steps: tuple[Step, ...] | None,
           keep: int) -> Marked:
    """The `keep` strongest of `events` in `text` (see Marked)."""
    landings = classify(text, [(e.char, len(e.forced)) for e in events], steps)
    strongest = sorted(sorted(range(len(events)),
                              key=lambda k: events[k].lp_forced - events[k].lp_wanted)[:keep])
    answers = [x.answer for x in landings]
    return Marked([events[k] for k in strongest], [landings[k] for k in strongest],
                  len(events), None if any(a is None for a in answers) else sum(map(bool, answers)),
                  max((e.lp_wanted - e.lp_forced for e in events), default=None))


class ShownArm(NamedTuple):
    """One arm of a shown item: its text, whole or as its head and tail (`clip`)."""

    text: str | None
    length: int                      # the whole text's length, in code points
    finish_reason: str | None
    unsupported: str | None
    answer: Any                      # the extracted answer; None: none
    span: tuple[int, int] | None     # where it was read, in `text`; None: not known or cut out
    marks: Marked | None = None      # recorded interventions (enforced arms)
    # the task's fields (vbw.task.fields): (name, code, value read); a checker's parts
    # are one per gold parameter, "name (type)", with no value; None: the task has none
    fields: list[tuple[str, int, Any]] | None = None
    # k > 1 samples: samples 2..k of the arm, each with its `state` (a ledger state)
    samples: list[ShownArm] | None = None
    state: str | None = None


class Shown(NamedTuple):
    """An item as the reports show it: per arm (in the pass's order) its record (None:
    the item line lacks the arm) and its chat as (role, content); `error`: what building
    the item or its prompts raised, for the report to raise."""

    gold: Any = None
    arms: list[ShownArm | None] = []
    chats: list[list[tuple[str, str]]] = []
    error: Exception | None = None


class Unbuilt(NamedTuple):
    """An item a pass may show, kept as read: its id, arm records (ScoredRecord.arms) and
    task item if built (vbw.score.stream.Pass builds its Shown if it is shown)."""

    id: str
    arms: dict[str, Any]
    item: Item | None
    samples: list[dict[str, Any]] | None = None  # samples 2..k's arm records, as read


def clip(text: str, limit: int) -> str:
    """`text`, or its first limit // 2 and last limit - limit // 2 characters."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return text[:head] + text[len(text) - (limit - head):]


def clip_span(span: tuple[int, int] | None, length: int,
              limit: int) -> tuple[int, int] | None:
    """A span of the whole text in `clip`'s text; None if it lies, even partly, in the
    part left out."""
    if span is None or length <= limit:
        return span
    start, end = span
    head, omitted = limit // 2, length - limit
    if start >= head + omitted:
        return start - omitted, end - omitted
    return None if end > head else span


def _events(raw: Any) -> list[Event] | None:
    if raw is None:
        return None
    return [Event(e["char"], e["wanted"], e["forced"], e["lp_wanted"], e["lp_forced"])
            for e in raw]


def _arm(task: Task, item: Item, arm: Arm, raw: dict[str, Any], steps: tuple[Step, ...] | None,
         showing: Showing, done: Extracted | None) -> ShownArm:
    text = raw.get("text")
    finish, unsupported = raw.get("finish_reason"), raw.get("unsupported_schema")
    if text is None:
        return ShownArm(None, 0, finish, unsupported, None, None)
    free = arm.kind == "unconstrained"
    obj, _, answer, span = done if done is not None else \
        task.extract(text, item, free, spans=True)
    events = _events(raw.get("interventions")) if arm.enforced else None
    limit = showing.limit
    return ShownArm(clip(text, limit), len(text), finish, unsupported, answer,
                    clip_span(span, len(text), limit),
                    None if events is None else marked(text, events, steps, showing.marks),
                    _fields(task, item, obj, text, answer, free))


def _fields(task: Task, item: Item, obj: Any, text: str, answer: Any,
            free: bool) -> list[tuple[str, int, Any]] | None:
    """An arm's fields as shown (ShownArm.fields)."""
    if not task.fields:
        return None
    row = task.fields.row(obj, text, answer, item, free)
    if row.values and isinstance(row.values[0], Part):
        return [(f"{p.name} ({p.group})", RIGHT if p.right else WRONG, None)
                for p in row.values]
    return [(name, code, value) for name, code, value in
            zip(task.fields.names, row.codes, row.values)]


def shown(task: Task, item: Item, arms: list[Arm], records: dict[str, Any],
          steps: tuple[Step, ...] | None, showing: Showing,
          done: list[Extracted] | None = None, samples: list[dict[str, Any]] | None = None,
          states: list[list[str]] | None = None) -> Shown:
    """The item as shown, from its arm records as decoded (`records`; vbw.replay.record:
    ScoredRecord.arms), as much as `showing` keeps; `done`: each arm's extraction with
    its span, if scoring did it (vbw.score.states.arm_states); `samples`: samples 2..k's
    records, `states[i][j]` sample i + 2's ledger state on arm j (None: not scored)."""
    rendered: dict[tuple[str, str | None], str] = {}
    chats = [[(m["role"], m["content"]) for m in
              task.messages(item, arm, free_text="", rendered=rendered)] for arm in arms]
    out = [None if records.get(a.key) is None else
           _arm(task, item, a, records[a.key], steps, showing, None if done is None else done[j])
           for j, a in enumerate(arms)]
    if samples:
        out = [rec if rec is None else rec._replace(samples=[
            _arm(task, item, a, s.get(a.key) or {}, steps, showing, None)._replace(
                state=None if states is None else states[i][j])
            for i, s in enumerate(samples)]) for j, (a, rec) in enumerate(zip(arms, out))]
    return Shown(item.gold, out, chats)
