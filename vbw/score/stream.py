"""Scoring a replay as it is read: one pass, holding per item only what it gathers
(vbw.score.tally) and what the reports show of the first items (vbw.score.shown).

Each record is scored as it arrives (vbw.replay.stream), its item built from its task
row, checked (vbw.task.audit.Auditor) and dropped. The result and every error are those
of scoring the whole replay in memory, in the same order of precedence: a bad line; ids
the task does not have; no selected item held; an unbuildable row (the first in task
order); a task check problem; an item lacking an arm. Items are reported in task order.
Every mode that scores a replay goes through `score_stream` and gets its `Scored`.
"""

from __future__ import annotations

from collections.abc import Callable

from typing import Any, NamedTuple, TextIO

import numpy as np

from vbw.errors import ConfigError, ReplayError, VbwError
from vbw.replay.format import EndV1
from vbw.replay.io import legacy_end
from vbw.replay.record import ScoredRecord
from vbw.replay.stream import ReplayStream
from vbw.score import split
from vbw.score.answers import AnswerParts
from vbw.score.finish import codes as finish_codes
from vbw.score.landing import answer_steps
from vbw.score.replaycheck import check_ids
from vbw.score.shared import SharedAudit
from vbw.score.shown import Showing, Shown, Unbuilt, shown
from vbw.score.states import STATE_NAMES, ItemStates, no_arm_message
from vbw.score.tally import Size, Tally
from vbw.task.arms import Arm
from vbw.task.audit import Auditor, audit
from vbw.task.findings import Audit, first_error
from vbw.task.extract import Extracted
from vbw.task.fields import FieldReader
from vbw.task.runner import Item, Task
from vbw.task.validity import Validators


class Scored(NamedTuple):
    """One replay, scored: the per-item outcome every mode reads."""

    audit: Audit  # the task checks on the held items (findings are the caller's to warn of)
    states: ItemStates
    missing: list[str]  # selected task items the replay lacks
    n_task: int  # items selected from the task
    timings: list[float | None]  # each item line's recorded item_seconds, in file order
    end: EndV1 | None
    # with `digests=True`: per row of `states`, each arm's text digest (vbw.score.digest);
    # 16 bytes a generation, never the texts
    digests: np.ndarray | None = None
    # with `showing` (vbw.score.shown): the finish reasons of the items the reports list
    # (vbw.score.finish codes) and what they show of the first ones, by item id
    finishes: dict[str, bytes] = {}
    shown: dict[str, Shown] = {}
    # with `answers=True`: answers.csv's rows (vbw.score.answers), theirs to `close`
    answers: AnswerParts | None = None


class Pass:
    """What one pass over the records gathers, indexed by position among the selected: a
    Tally (vbw.score.tally; TALLY, the class), plus the lines' timings and stray ids."""

    TALLY: type[Tally] = Tally

    def __init__(self, task: Task, selected: list[str], arms: list[Arm],
                 shared: SharedAudit | None = None, digests: bool = False,
                 showing: Showing = Showing(), rows: list[int] | None = None,
                 answers: bool = False, samples: int = 1) -> None:
        """`rows`: each selected item's task row, where the selection is not the task's
        first items (a shard's); `answers`: keep answers.csv's rows; `samples`: k, the
        replay header's samples per item and arm."""
        self.samples = samples
        self.task, self.arms, self.shared, self.showing = task, arms, shared, showing
        self.rows = rows
        self.keys = [a.key for a in arms]
        self._key_set = frozenset(self.keys)
        self.position: dict[str, list[int]] = {item_id: [i] for i, item_id in enumerate(selected)}
        if len(self.position) != len(selected):  # the task's data repeats an id
            self.position = {}
            for i, item_id in enumerate(selected):
                self.position.setdefault(item_id, []).append(i)
        self.t = self.TALLY.new(Size(len(selected), len(arms), showing, digests,
                                     len(task.fields.names), answers, samples),
                                auditor=Auditor(task))
        self.steps = answer_steps(task.spec.extract.json_.path)
        self.stray: list[str] = []
        self.timings: list[float | None] = []
        self.validators = Validators()
        self._kept: tuple[int, list[Extracted]] = (-1, [])  # (position, its extractions)

    def add(self, rec: ScoredRecord, path: str, timed: bool = True,
            item: Item | None = None) -> None:
        """Score a record; `timed=False`: another pass `note`s it (vbw.score.split);
        `item`: its task item, already built (vbw.score.written)."""
        if timed:
            self.note(rec.id, rec.item_seconds)
        for pos in self.position.get(rec.id, ()):  # one, unless the task's data repeats an id
            self._add_at(pos, rec, path, item)

    def note(self, item_id: str, seconds: float | None) -> None:
        """A record's timing, and its id if the task does not select it, in file order."""
        self.timings.append(seconds)
        if item_id not in self.position:
            self.stray.append(item_id)

    def note_all(self, lines: list[tuple[int, str, float | None]]) -> None:
        """`note` each of (line number, id, seconds), in the order given."""
        position = self.position
        self.timings.extend([seconds for _, _, seconds in lines])
        self.stray.extend([item_id for _, item_id, _ in lines if item_id not in position])

    def forked(self) -> None:
        """In a forked worker (vbw.score.split): a shared audit gathers this pass's task
        checks afresh, since the parent's copy already counts the earlier replays'."""
        if self.shared is not None:
            self.shared.auditor = Auditor(self.task)

    def state(self) -> dict[str, Any]:
        """What scoring gathered, for `merge` into the pass of another process."""
        shared = None if self.shared is None else (self.shared.seen,
                                                   self.shared.auditor.state())
        return {"tally": self.t.state(), "shared": shared}

    def merge(self, st: dict[str, Any]) -> None:
        """Add the `state()` of a pass that scored other records of the same replay."""
        self.t.merge(st["tally"])
        if self.shared is not None:  # the worker checked only items no process had
            seen, checks = st["shared"]
            self.shared.seen |= seen
            self.shared.auditor.merge(checks)

    def _add_at(self, pos: int, rec: ScoredRecord, path: str, built: Item | None) -> None:
        t = self.t
        t.held[pos] = True
        if t.finish.wants(pos):
            t.finish.put(pos, finish_codes(rec.arms, self.keys))
        show = t.shown.wants(pos)
        if rec.unsupported:
            t.excluded[pos] = rec.unsupported
            if self.shared is None:  # a shared audit checks every held item, as compare did
                if show:
                    self._show(pos, rec, built)
                return
        try:
            item = built if built is not None and built.id == rec.id else \
                self.task.item(self._row(pos), rec.id)
        except VbwError as e:  # a row the task cannot build: the first in task order stops
            if t.bad_row is None or pos < t.bad_row[0]:
                t.bad_row = (pos, e)
            return
        (self.shared or t.auditor).add(item, pos)
        if rec.unsupported:
            return
        lacking = None if self._key_set <= rec.texts.keys() else \
            next(k for k in self.keys if k not in rec.texts)
        if lacking is not None:
            if t.no_arm is None or pos < t.no_arm[0]:
                t.no_arm = (pos, no_arm_message(path, rec.id, lacking, rec.texts))
            return
        t.add_scored(pos, self, rec, item)
        t.scored[pos] = True
        if show:
            self._show(pos, rec, item)

    def keep(self, pos: int) -> list[Extracted] | None:
        """Where scoring adds the item's extractions if it is shown (`_show`); else None."""
        if pos >= self.showing.detailed:
            return None
        self._kept = (pos, [])
        return self._kept[1]

    def _row(self, pos: int) -> int:
        return pos if self.rows is None else self.rows[pos]

    def _show(self, pos: int, rec: ScoredRecord, item: Item | None) -> None:
        """Keep what the reports show of the item (vbw.score.shown). Below position
        `detailed` an item held is surely shown, so it is built now; above, it is shown
        only if items before it are missing, so it is kept as read (`Unbuilt`) and built
        if it is (`shown_items`): a worker scoring the file's end builds none."""
        unbuilt = Unbuilt(rec.id, rec.arms or {}, item,
                          [x.arms or {} for x in rec.samples] if rec.samples else None)
        self.t.shown.put(pos, self._built(pos, unbuilt) if pos < self.showing.detailed
                         else unbuilt)

    def _built(self, pos: int, u: Unbuilt) -> Shown:
        """The item as shown; an error building it is the report's to raise."""
        try:
            item = u.item if u.item is not None and u.item.id == u.id else \
                self.task.item(self._row(pos), u.id)
            done = self._kept[1] if self._kept[0] == pos else None
            return shown(self.task, item, self.arms, u.arms, self.steps, self.showing, done,
                         u.samples, self._sample_states(pos))
        except VbwError as e:
            return Shown(error=e)

    def _sample_states(self, pos: int) -> list[list[str]] | None:
        """Samples 2..k's ledger states per arm at a scored position (None: not scored)."""
        t = self.t
        if t.s_valid is None or not t.scored[pos]:
            return None
        return [[STATE_NAMES[(int(t.s_valid[pos, j, i]) + 1) * 2 + int(t.s_right[pos, j, i])]
                 for j in range(len(self.arms))] for i in range(1, t.s_valid.shape[2])]

    def shown_items(self, selected: list[str]) -> dict[str, Shown]:
        """What the pass kept to show, by item id (a repeated id: its last position's)."""
        kept = self.t.shown.items
        return {selected[pos]: self._built(pos, kept[pos]) if type(kept[pos]) is Unbuilt
                else kept[pos] for pos in sorted(kept)}


def _checked(p: Pass, task: Task, n: int | None, selected: list[str]) -> Audit:
    """The task checks on the held items, as vbw.cli.job did before scoring: a problem stops
    the run (re-found in task order, for its exact words); findings are returned."""
    result = p.t.auditor.result()
    if result.problems:
        held = {selected[i] for i in np.flatnonzero(p.t.held)}
        result = audit(task, task.items(n, only=held))
        if result.problems:
            raise ConfigError(first_error(result))
    return result


def score_stream(task: Task, stream: ReplayStream, arms: list[Arm], n: int | None,
                 err: TextIO, take: Callable[[list[str]], list[str]] | None = None, *,
                 shared: SharedAudit | None = None, digests: bool = False,
                 showing: Showing = Showing(), given: Pass | None = None,
                 made_for: int | None = None, answers: bool = False) -> Scored:
    """Score every record of `stream` (see the module docstring). `take` narrows the
    selection (a shard job's replay holds its shard of the items only). `shared` takes
    the task checks (mode=compare runs them once over every replay's items, then calls
    `shared.result()`; `Scored.audit` is then empty); `digests` keeps each scored text's
    digest in `Scored.digests`; `showing`: what to keep for the reports (`Scored.finishes`
    and `Scored.shown`, by item id). `given`: the pass over this replay's records,
    scored as they were written (vbw.score.written), made for this selection and these
    arms; the replay's item lines are then not read (its end line is the caller's to set
    in `stream.end`). `made_for`: the replay's own n (vbw.modes.selection): selected items
    past it and past the last one held are not counted missing. `answers`: keep
    answers.csv's rows (`Scored.answers`)."""
    selected = task.ids(n) if take is None else take(task.ids(n))
    rows = None if take is None else take(list(range(len(task.ids(n)))))
    k = stream.header.samples
    if given is not None and (len(given.t.held), given.keys, given.samples) != (
            len(selected), [a.key for a in arms], k):
        given = None  # not a pass over this selection, arms and k: the file is read
    p = given if given is not None else Pass(task, selected, arms, shared, digests, showing, rows,
                                             answers, k)
    path = str(stream.path)
    if given is not None:
        stream.close()
    elif split.wanted(stream.path):
        p = split.score_split(p, stream, path,  # a forked worker scores every other line
                              lambda: Pass(task, selected, arms, shared, digests, showing,
                                           rows, answers, k))
    else:
        for rec in stream.records():
            p.add(rec, path)
    t = p.t
    within = _within(selected, t.held, made_for)
    missing = check_ids(task, selected[:within], t.held[:within].tolist(), p.stray, path,
                        len(p.timings), err)
    if t.bad_row is not None:
        raise t.bad_row[1]
    # shared: the own auditor saw no item, so its result is an empty Audit (items=0)
    result = _checked(p, task, n, selected) if shared is None else t.auditor.result()
    if t.no_arm is not None:
        raise ReplayError(t.no_arm[1])
    end = stream.end
    if stream.header.version == 0 and end is None:
        end = legacy_end(stream.meta_as_written, len(p.timings))
    rows = np.flatnonzero(t.scored)
    return Scored(result, _states(selected, arms, t, rows, task.fields), missing, within, p.timings,
                  end, None if t.digests is None else t.digests[rows],
                  {selected[pos]: t.finish.items[pos] for pos in sorted(t.finish.items)},
                  p.shown_items(selected), t.answers)


def _within(selected: list[str], held: np.ndarray, made_for: int | None) -> int:
    """How many selected items count: all, or the replay's own n and any it holds after."""
    if made_for is None:
        return len(selected)
    last = int(np.flatnonzero(held)[-1]) + 1 if held.any() else 0
    return min(len(selected), max(made_for, last))


def _states(selected: list[str], arms: list[Arm], t: Tally, rows: np.ndarray,
            fields: FieldReader) -> ItemStates:
    excluded = sorted(t.excluded)
    named = t.field_codes is not None
    return ItemStates(ids=[selected[i] for i in rows], arms=list(arms),
                      field_names=fields.names if named else [],
                      field_label=fields.label if named else "",
                      excluded=[selected[i] for i in excluded],
                      excluded_reasons={selected[i]: t.excluded[i] for i in excluded},
                      **t.states(rows))
