"""The item browser's data: per item, its prompts and gold, and per arm its state, text and
extracted answer, as report.html embeds it.

Everything here comes from what the scoring pass kept of the items (vbw.score.shown):
the prompts it rendered with the runner's own `Task.messages` (a replay records texts,
not prompts; the page says so), each arm's extracted answer and, where the step that
found it knows where it read (a regex or `\\boxed{}` step; the first JSON object of a
JSON arm), that span, so the page can mark it.

How it works and why: docs/design.md, section vbw.report.browser.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from vbw.replay import ReplayHeader
from vbw.report.marks import MAX_MARKS, ArmMarks, arm_marks
from vbw.score.cells import spell
from vbw.score.shown import Showing, Shown, ShownArm, clip
from vbw.task.arms import Arm
from vbw.task.fields import NOT_READ, RIGHT, WRONG
from vbw.task.runner import Task

MAX_TEXT_CHARS = 20_000   # embedded characters per text: the head and tail halves
MAX_DETAILED_ITEMS = 2_000  # items whose texts and prompts are embedded (the first, in task order)
MAX_LISTED_ITEMS = 20_000  # items listed at all; the tables and ledger.csv count every item
# what the scoring pass keeps for the page (vbw.score.shown)
SHOWING = Showing(MAX_LISTED_ITEMS, MAX_DETAILED_ITEMS, MAX_TEXT_CHARS, MAX_MARKS)
FREE = Arm("unconstrained", None)
PROMPTS_FROM_TASK = ("Prompts are not recorded in replays: they are rendered here from the "
                     "task file with the runner's own templates")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cut(_M):
    """A text as embedded: `s` holds the kept characters; `omitted` characters were left
    out at index `at` of `s` (0 omitted: the whole text)."""
    s: str
    at: int = 0
    omitted: int = 0


class Turn(_M):
    """One message of an arm's conversation: a prompt of the item (`prompt`: an index into
    ItemView.prompts), or an earlier arm's text (`arm`), or nothing recorded."""
    role: str
    prompt: int | None = None
    arm: str | None = None


class SampleView(_M):
    """Another sample of an arm (k > 1 samples): its ledger state, text and answer."""
    state: str
    text: Cut | None = None
    finish_reason: str | None = None
    answer: str | None = None
    span: tuple[int, int] | None = None
    span_kind: str | None = None


class ArmView(_M):
    state: str                       # a ledger state ("valid/wrong", "n/a/right") or "excluded"
    text: Cut | None = None          # None: no text recorded
    finish_reason: str | None = None
    answer: str | None = None        # the extracted answer's JSON spelling; None: none
    span: tuple[int, int] | None = None  # where it was read, in `text.s` coordinates
    span_kind: str | None = None     # "answer" (the extracted candidate) or "json" (the object)
    turns: list[Turn] = []
    unsupported: str | None = None
    interventions: ArmMarks | None = None  # None: not an enforced arm, or not recorded
    # the task's fields: [name, "right"/"wrong"/"n/a", value read as JSON or None]
    fields: list[tuple[str, str, str | None]] | None = None
    samples: list[SampleView] | None = None  # k > 1: samples 2..k (this view is sample 1)


class ItemView(_M):
    id: str
    excluded: str | None = None      # why the item is left out of every arm
    detailed: bool = True            # False: states and finish reasons only (over the cap)
    gold: str | None = None
    prompts: list[Cut] = []
    arms: dict[str, ArmView]
    fields_changed: list[str] = []   # fields read differently by two arms that state them


class Browser(_M):
    """Everything the item browser shows; report.html embeds it as JSON."""
    arms: list[str]
    contract: list[str]              # arms with a validity (wrong-but-valid filters)
    comparisons: list[tuple[str, str]]
    prompts_note: str
    max_text_chars: int = MAX_TEXT_CHARS
    max_detailed: int = MAX_DETAILED_ITEMS
    unlisted: int = 0                # items beyond MAX_LISTED_ITEMS: in the tables, not listed
    items: list[ItemView]            # the first max_detailed items, with their texts
    rows: list[dict[str, Any]] = []  # the items after them: plain rows (see reasons_row), JSON as is
    # the detailed items already encoded for the page (vbw.report.pagedata), after `items`
    encoded: list[str] = []


def utf16(s: str, i: int) -> int:
    """Index i of `s` (in code points, as Python counts) in UTF-16 code units, as
    JavaScript's strings count: one more for each character beyond U+FFFF before it."""
    if s.isascii():
        return i
    return i + sum(1 for ch in s[:i] if ord(ch) > 0xFFFF)


def cut(text: str, limit: int = MAX_TEXT_CHARS) -> Cut:
    """The text as embedded (see the module docstring); `at` in UTF-16 units."""
    return clipped(clip(text, limit), len(text), limit)


def clipped(kept: str, length: int, limit: int = MAX_TEXT_CHARS) -> Cut:
    """The Cut of a text of `length` characters whose `clip` is `kept`."""
    if length <= limit:
        return Cut(s=kept)
    return Cut(s=kept, at=utf16(kept, limit // 2), omitted=length - limit)


def _turns(arm: Arm, arms: list[Arm], chat: list[tuple[str, str]],
           prompts: dict[str, int]) -> list[Turn]:
    """The arm's chat as turns; `prompts`: the item's prompts so far, each once."""
    out = []
    for role, content in chat:
        if role == "assistant":  # reason_then_constrain's first answer
            out.append(Turn(role="assistant", arm=FREE.key if FREE in arms else None))
        else:
            out.append(Turn(role=role, prompt=prompts.setdefault(content, len(prompts))))
    return out


def _span(arm: Arm, rec: ShownArm) -> tuple[tuple[int, int] | None, str | None]:
    """Where the answer was read, in UTF-16 units, and what was read there."""
    if rec.span is None or rec.text is None:
        return None, None
    return ((utf16(rec.text, rec.span[0]), utf16(rec.text, rec.span[1])),
            "json" if arm.has_contract else "answer")


def _sample(arm: Arm, rec: ShownArm, state: str) -> SampleView:
    span, kind = _span(arm, rec)
    return SampleView(state=rec.state or state,
                      text=None if rec.text is None else clipped(rec.text, rec.length),
                      finish_reason=rec.finish_reason,
                      answer=None if rec.answer is None else spell(rec.answer), span=span,
                      span_kind=kind)


def _arm(arm: Arm, rec: ShownArm | None, state: str, turns: list[Turn]) -> ArmView:
    samples = None if rec is None or not rec.samples else \
        [_sample(arm, x, "excluded" if state == "excluded" else "not scored")
         for x in rec.samples]
    if rec is None or rec.text is None:
        return ArmView(state=state, unsupported=rec.unsupported if rec else None,
                       finish_reason=rec.finish_reason if rec else None, turns=turns,
                       samples=samples)
    span, kind = _span(arm, rec)
    marks = None if rec.marks is None else arm_marks(rec, MAX_TEXT_CHARS)
    return ArmView(state=state, text=clipped(rec.text, rec.length),
                   finish_reason=rec.finish_reason,
                   answer=None if rec.answer is None else spell(rec.answer), span=span,
                   span_kind=kind, unsupported=rec.unsupported, turns=turns,
                   interventions=marks,
                   fields=None if rec.fields is None else [
                       (name, _FIELD_STATE[code], None if value is None else spell(value))
                       for name, code, value in rec.fields], samples=samples)


_FIELD_STATE = {RIGHT: "right", WRONG: "wrong", NOT_READ: "n/a"}


def changed_fields(views: dict[str, ArmView]) -> list[str]:
    """The fields two arms that state them read differently (state or value), in order."""
    seen: dict[str, set[tuple[str, str | None]]] = {}
    for v in views.values():
        for name, state, value in v.fields or ():
            if state != "n/a":
                seen.setdefault(name, set()).add((state, value))
    return [name for name, got in seen.items() if len(got) > 1]


def item_view(item_id: str, arms: list[Arm], shown: Shown, states: dict[str, str] | None,
              excluded: str | None) -> ItemView:
    """One item, as the scoring pass kept it (vbw.score.shown): `states` is its ledger
    row (None when excluded)."""
    if shown.error is not None:
        raise shown.error
    prompts: dict[str, int] = {}  # each distinct prompt once: its index
    views = {}
    for arm, rec, chat in zip(arms, shown.arms, shown.chats):
        state = "excluded" if states is None else states[arm.key]
        views[arm.key] = _arm(arm, rec, state, _turns(arm, arms, chat, prompts))
    return ItemView(id=item_id, excluded=excluded, gold=spell(shown.gold),
                    prompts=[cut(p) for p in prompts], arms=views,
                    fields_changed=changed_fields(views))


def prompts_note(header: ReplayHeader, task: Task) -> str:
    """What the page says about its prompts: whether the replay's task hash vouches that
    they are the ones the model was sent."""
    recorded = header.task_hash
    if recorded is None:
        return f"{PROMPTS_FROM_TASK}; the replay records no task hash, so it is not " \
               "verified that these are the prompts its texts were generated from."
    if recorded != task.generation_hash():
        return f"{PROMPTS_FROM_TASK}; the task changed since the replay was generated " \
               "(its task hash differs), so the model may have been sent other prompts."
    return f"{PROMPTS_FROM_TASK}; the replay's task hash matches, so they are the ones sent."


def reasons_row(item_id: str, reasons: list[str | None], arms: list[Arm],
                states: dict[str, str] | None, excluded: str | None) -> dict[str, Any]:
    """An item without details, as a plain dict in ItemView's JSON shape (no model: there
    may be 100,000): each arm's state and finish reason (None: none recorded)."""
    views = {}
    for a, finish in zip(arms, reasons):
        view = {"state": "excluded" if states is None else states[a.key]}
        if finish is not None:
            view["finish_reason"] = finish
        views[a.key] = view
    row: dict[str, Any] = {"id": item_id, "detailed": False, "arms": views}
    if excluded is not None:
        row["excluded"] = excluded
    return row
