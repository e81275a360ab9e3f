"""The item browser's data: per item, its prompts and gold, and per arm its state, text and
extracted answer, as report.html embeds it.

A replay records texts, not prompts, so the prompts are rendered from the task, with the
runner's own `Task.messages` (the exact turns each arm is sent); the page says so. The
answer is extracted again with the task's runner, and where the step that found it knows
where it read (a regex or `\\boxed{}` step; the first JSON object of a JSON arm), that span
is recorded so the page can mark it.

Size: a text (or prompt) longer than MAX_TEXT_CHARS keeps its first and last
MAX_TEXT_CHARS/2 characters and records how many were left out between them; the page
shows a marker there. So an item costs at most (arms + distinct prompts) x MAX_TEXT_CHARS
characters, whatever the model wrote; the full texts stay in the replay. Only the first
MAX_DETAILED_ITEMS items (in task order) carry texts and prompts; every other item is a
row of states and finish reasons (from the ledger and the raw replay line, with no
extraction), so a 100,000-item run stays within scoring's time and memory.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from vbw.replay import ArmRecord, ItemRecord, ReplayHeader
from vbw.report.marks import ArmMarks, arm_marks
from vbw.score.landing import answer_steps
from vbw.task.arms import Arm
from vbw.task.jsonscan import first_json_span
from vbw.task.runner import Item, Task

MAX_TEXT_CHARS = 20_000   # embedded characters per text: the head and tail halves
MAX_VALUE_CHARS = 2_000   # a gold or extracted answer's JSON spelling, cut beyond this
MAX_DETAILED_ITEMS = 2_000  # items whose texts and prompts are embedded (the first, in task order)
MAX_LISTED_ITEMS = 20_000  # items listed at all; the tables and ledger.csv count every item
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


class ItemView(_M):
    id: str
    excluded: str | None = None      # why the item is left out of every arm
    detailed: bool = True            # False: states and finish reasons only (over the cap)
    gold: str | None = None
    prompts: list[Cut] = []
    arms: dict[str, ArmView]


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
    rows: list[dict[str, Any]] = []  # the items after them: plain rows (see plain_row), JSON as is
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
    if len(text) <= limit:
        return Cut(s=text)
    head = limit // 2
    kept = text[:head] + text[len(text) - (limit - head):]
    return Cut(s=kept, at=utf16(kept, head), omitted=len(text) - limit)


def cut_span(span: tuple[int, int] | None, text: str,
             limit: int = MAX_TEXT_CHARS) -> tuple[int, int] | None:
    """A span of the full text (code points) in the embedded text's UTF-16 units; None
    if it lies, even partly, in the part left out."""
    if span is None:
        return None
    start, end = span
    if len(text) > limit:
        head, omitted = limit // 2, len(text) - limit
        if start >= head + omitted:
            start, end = start - omitted, end - omitted
        elif end > head:
            return None
        text = text[:head] + text[head + omitted:]
    return utf16(text, start), utf16(text, end)


def spell(value: Any) -> str:
    """A gold or answer as JSON (non-JSON values as their str), cut to MAX_VALUE_CHARS."""
    try:
        s = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError):
        s = str(value)
    if len(s) > MAX_VALUE_CHARS:
        s = s[:MAX_VALUE_CHARS] + f"… [{len(s) - MAX_VALUE_CHARS:,} more characters]"
    return s


def free_span(task: Task, text: str, item: Item) -> tuple[int, int] | None:
    """Where the free-text answer was read: the span of the winning step's candidate, for
    steps that know it (regex, boxed). The chain is the runner's: the first step whose
    candidate coerces to an answer wins."""
    for step in task.spec.extract.free:
        candidate = step.apply(text, item.fields)
        if candidate is not None and task.spec.coerce.apply(candidate) is not None:
            span = getattr(step, "span", None)
            return span(text) if span is not None else None
    return None


def _turns(task: Task, item: Item, arm: Arm, arms: list[Arm], prompts: dict[str, int],
           rendered: dict[tuple[str, str | None], str]) -> list[Turn]:
    """The arm's chat as turns; `rendered`: the item's prompts, each rendered once for all
    its arms (prompt_json[S] and constrained[S] share theirs)."""
    out = []
    for msg in task.messages(item, arm, free_text="", rendered=rendered):
        if msg["role"] == "assistant":  # reason_then_constrain's first answer
            out.append(Turn(role="assistant", arm=FREE.key if FREE in arms else None))
        else:
            index = prompts.setdefault(msg["content"], len(prompts))
            out.append(Turn(role=msg["role"], prompt=index))
    return out


def _arm(task: Task, item: Item, arm: Arm, rec: ArmRecord | None, state: str,
         turns: list[Turn]) -> ArmView:
    if rec is None or rec.text is None:
        return ArmView(state=state, unsupported=rec.unsupported_schema if rec else None,
                       finish_reason=rec.finish_reason if rec else None, turns=turns)
    text = rec.text
    obj, answer = task.answer(text, item, arm)
    if arm.has_contract:
        span, kind = (first_json_span(text), "json") if obj is not None else (None, None)
    else:
        span, kind = free_span(task, text, item), "answer"
    span = cut_span(span, text)
    marks = None
    if arm.enforced and rec.interventions is not None:
        marks = arm_marks(text, rec.interventions, answer_steps(task.spec.extract.json_.path),
                          MAX_TEXT_CHARS)
    return ArmView(state=state, text=cut(text), finish_reason=rec.finish_reason,
                   answer=None if answer is None else spell(answer), span=span,
                   span_kind=kind if span is not None else None,
                   unsupported=rec.unsupported_schema, turns=turns, interventions=marks)


def item_view(task: Task, item: Item, arms: list[Arm], record: ItemRecord,
              states: dict[str, str] | None, excluded: str | None) -> ItemView:
    """One item: `states` is its ledger row (None when excluded)."""
    prompts: dict[str, int] = {}  # each distinct prompt once: its index
    rendered: dict[tuple[str, str | None], str] = {}
    views = {}
    for arm in arms:
        state = "excluded" if states is None else states[arm.key]
        views[arm.key] = _arm(task, item, arm, record.arms.get(arm.key), state,
                              _turns(task, item, arm, arms, prompts, rendered))
    return ItemView(id=item.id, excluded=excluded, gold=spell(item.gold),
                    prompts=[cut(p) for p in prompts], arms=views)


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


def plain_row(obj: dict[str, Any], arms: list[Arm], states: dict[str, str] | None,
              excluded: str | None) -> dict[str, Any]:
    """An item without details, as a plain dict in ItemView's JSON shape (no model: there
    may be 100,000): each arm's state and finish reason, from the line as decoded (the
    scoring pass has already checked it against the item-line model)."""
    raw = obj.get("arms") or {}
    return reasons_row(obj["id"], [(raw.get(a.key) or {}).get("finish_reason") for a in arms],
                       arms, states, excluded)


def reasons_row(item_id: str, reasons: list[str | None], arms: list[Arm],
                states: dict[str, str] | None, excluded: str | None) -> dict[str, Any]:
    """plain_row from the item's id and its finish reason per arm (None: none recorded)."""
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
