"""Scoring a replay as it is read: one pass, holding per item only its states.

A replay of 100,000 items x 6 arms is hundreds of MB of text, and scoring needs each
item (its task row, gold and schemas) and its texts only while it scores them. So each
record is scored as it arrives (vbw.replay.stream), its item is built from the task row
of its id, checked (vbw.task.audit.Auditor) and dropped; what stays is two small arrays
per (item, arm).

The result, the warnings and every error are those of scoring the whole replay read in
memory, in the same order of precedence: a bad line anywhere in the file; ids the task
does not have; no selected item held; an item whose row cannot be built (the first in
task order); a task check problem (the Audit re-run in task order, for its exact words);
an item lacking an arm (the first in task order). Items are reported in task order
whatever the order of the file.

Every mode that scores a replay goes through `score_stream` and gets its `Scored`: replay
and live scoring (vbw.modes.scoring), merge (which scores the merged replay the same way)
and compare, which asks for the digests of the texts (to count identical generations) and
shares one `SharedAudit` between its replays, so the task checks run once per item.
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
from vbw.score.digest import NO_TEXT, text_digest
from vbw.score.finish import Finishes
from vbw.score.finish import codes as finish_codes
from vbw.score.interventions import NOT_RECORDED, empty_rows, event_row
from vbw.score.landing import answer_steps
from vbw.score.states import ItemStates, arm_states, no_arm_message
from vbw.task.arms import Arm
from vbw.task.audit import Audit, Auditor, audit, first_error, first_ids
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
    finishes: Finishes | None = None  # with `keep_finish`: vbw.score.finish


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


class Pass:
    """What one pass over the records gathers, indexed by position among the selected."""

    def __init__(self, task: Task, selected: list[str], arms: list[Arm],
                 shared: SharedAudit | None = None, digests: bool = False,
                 keep_finish: int = 0) -> None:
        self.task, self.arms, self.shared = task, arms, shared
        self.keys = [a.key for a in arms]
        self._key_set = frozenset(self.keys)
        self.position: dict[str, list[int]] = {item_id: [i] for i, item_id in enumerate(selected)}
        if len(self.position) != len(selected):  # the task's data repeats an id
            self.position = {}
            for i, item_id in enumerate(selected):
                self.position.setdefault(item_id, []).append(i)
        n = len(selected)
        self.held = np.zeros(n, dtype=bool)
        self.scored = np.zeros(n, dtype=bool)
        self.valid = np.zeros((n, len(arms)), dtype=np.int8)
        self.right = np.zeros((n, len(arms)), dtype=bool)
        self.digests = np.full((n, len(arms)), NO_TEXT, dtype="S16") if digests else None
        self.events = empty_rows(n, len(arms))  # interventions (vbw.score.interventions)
        self.keep_finish = min(n, keep_finish)  # vbw.score.finish
        self.finish = np.zeros((self.keep_finish, len(arms)), dtype=np.uint8)
        self.steps = answer_steps(task.spec.extract.json_.path)
        self.excluded: dict[int, str] = {}
        self.stray: list[str] = []
        self.timings: list[float | None] = []
        self.bad_row: tuple[int, VbwError] | None = None
        self.no_arm: tuple[int, str] | None = None
        self.auditor = Auditor(task)
        self.validators = Validators()

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
        return {"held": self.held, "scored": self.scored, "valid": self.valid,
                "right": self.right, "digests": self.digests,
                # (n x arms x 4 int32s: 9.6 MB at 100,000 items of 6 arms, most often none)
                "events": self.events if (self.events != NOT_RECORDED).any() else None,
                "excluded": self.excluded, "bad_row": self.bad_row, "finish": self.finish,
                "no_arm": self.no_arm, "auditor": self.auditor.state(), "shared": shared}

    def merge(self, st: dict[str, Any]) -> None:
        """Add the `state()` of a pass that scored other records of the same replay."""
        kept = st["held"][:self.keep_finish]
        self.finish[kept] = st["finish"][kept]
        self.held |= st["held"]
        rows = st["scored"]
        self.valid[rows], self.right[rows] = st["valid"][rows], st["right"][rows]
        if st["events"] is not None:
            self.events[rows] = st["events"][rows]
        if self.digests is not None:
            self.digests[rows] = st["digests"][rows]
        self.scored |= rows
        self.excluded.update(st["excluded"])
        for name in ("bad_row", "no_arm"):
            theirs, mine = st[name], getattr(self, name)
            if theirs is not None and (mine is None or theirs[0] < mine[0]):
                setattr(self, name, theirs)
        self.auditor.merge(st["auditor"])
        if self.shared is not None:  # the worker checked only items no process had
            seen, checks = st["shared"]
            self.shared.seen |= seen
            self.shared.auditor.merge(checks)

    def _add_at(self, pos: int, rec: ScoredRecord, path: str, built: Item | None) -> None:
        self.held[pos] = True
        if pos < self.keep_finish:
            self.finish[pos] = finish_codes(rec.arms, self.keys)
        if rec.unsupported:
            self.excluded[pos] = rec.unsupported
            if self.shared is None:  # a shared audit checks every held item, as compare did
                return
        try:
            item = built if built is not None and built.id == rec.id else \
                self.task.item(pos, rec.id)
        except VbwError as e:  # a row the task cannot build: the first in task order stops
            if self.bad_row is None or pos < self.bad_row[0]:
                self.bad_row = (pos, e)
            return
        (self.shared or self.auditor).add(item, pos)
        if rec.unsupported:
            return
        lacking = None if self._key_set <= rec.texts.keys() else \
            next(k for k in self.keys if k not in rec.texts)
        if lacking is not None:
            if self.no_arm is None or pos < self.no_arm[0]:
                self.no_arm = (pos, no_arm_message(path, rec.id, lacking, rec.texts))
            return
        vrow, rrow = arm_states(self.task, item, rec.texts, self.arms, self.validators)
        self.valid[pos], self.right[pos], self.scored[pos] = vrow, rrow, True
        if self.digests is not None:
            self.digests[pos] = [text_digest(rec.texts.get(a.key)) for a in self.arms]
        if rec.interventions:
            self.events[pos] = event_row(rec.texts, rec.interventions, self.arms, self.steps)


def _same_task(a: str | None, b: str) -> bool:
    return a is not None and a.replace("-", "_") == b.replace("-", "_")


def check_replay_matches(replay: ReplayStream, task: Task, allow_mismatch: bool) -> None:
    """The replay is of this task; with a recorded task hash, of this version of it (a
    replay without one is scored, and its report says the version was not verified)."""
    header = replay.header
    if not _same_task(header.task, task.name):
        raise ReplayError(f"{replay.path}: meta.task is {header.task!r}, not {task.name!r}")
    if header.task_hash is not None and header.task_hash != task.generation_hash() \
            and not allow_mismatch:
        raise ReplayError(f"{replay.path}: meta.task_hash differs from task {task.path} (its "
                          "prompts, schemas or data changed since generation); pass "
                          "allow_task_mismatch=true to score it anyway")


def check_ids(task: Task, selected: list[str], held: list[bool], stray: list[str],
              path: str, records: int, err: TextIO) -> list[str]:
    """Replay ids the task does not have (`stray`, beyond the selection) are an error
    unless `n`/`first` explains them; selected items not `held` are a warning. Returns the
    missing ids."""
    if stray:
        everywhere = set(task.ids(None, all_rows=True))
        unknown = [i for i in stray if i not in everywhere]
        if unknown:
            raise ReplayError(f"{path}: {len(unknown)} item id(s) are not in task "
                              f"{task.name} ({task.path}): {first_ids(unknown, quote=True)}; "
                              "the replay belongs to other data, or its ids were changed")
    missing = [i for i, h in zip(selected, held) if not h]
    if len(missing) == len(selected):
        raise ReplayError(f"{path}: no item of task {task.name} can be scored (the "
                          f"replay holds {records} item(s), none of the {len(selected)} "
                          "selected)")
    if missing:
        print(f"vbw: warning: {len(missing)} of {len(selected)} task item(s) are not in "
              f"{path}: {first_ids(missing, quote=True)}; scoring the "
              f"{len(selected) - len(missing)} it holds", file=err)
    return missing


def _checked(p: Pass, task: Task, n: int | None, selected: list[str]) -> Audit:
    """The task checks on the held items, as vbw.cli.job did before scoring: a problem stops
    the run (re-found in task order, for its exact words); findings are returned."""
    result = p.auditor.result()
    if result.problems:
        held = {selected[i] for i in np.flatnonzero(p.held)}
        result = audit(task, task.items(n, only=held))
        if result.problems:
            raise ConfigError(first_error(result))
    return result


def score_stream(task: Task, stream: ReplayStream, arms: list[Arm], n: int | None,
                 err: TextIO, take: Callable[[list[str]], list[str]] | None = None, *,
                 shared: SharedAudit | None = None, digests: bool = False,
                 keep_finish: int = 0, given: Pass | None = None) -> Scored:
    """Score every record of `stream` (see the module docstring). `take` narrows the
    selection (a shard job's replay holds its shard of the items only). `shared` takes
    the task checks (mode=compare runs them once over every replay's items, then calls
    `shared.result()`; `Scored.audit` is then empty); `digests` keeps each scored text's
    digest in `Scored.digests`; `keep_finish` keeps the finish reasons of the first so many
    selected items in `Scored.finishes`. `given`: the pass over this replay's records,
    scored as they were written (vbw.score.written), made for this selection and these
    arms; the replay's item lines are then not read (its end line is the caller's to set
    in `stream.end`)."""
    selected = task.ids(n) if take is None else take(task.ids(n))
    if given is not None and (len(given.held), given.keys) != (len(selected),
                                                               [a.key for a in arms]):
        given = None  # not a pass over this selection and these arms: the file is read
    p = given if given is not None else Pass(task, selected, arms, shared, digests, keep_finish)
    path = str(stream.path)
    if given is not None:
        stream.close()
    elif split.wanted(stream.path):
        p = split.score_split(p, stream, path,  # a forked worker scores every other line
                              lambda: Pass(task, selected, arms, shared, digests,
                                            keep_finish))
    else:
        for rec in stream.records():
            p.add(rec, path)
    missing = check_ids(task, selected, p.held.tolist(), p.stray, path, len(p.timings), err)
    if p.bad_row is not None:
        raise p.bad_row[1]
    # shared: the own auditor saw no item, so its result is an empty Audit (items=0)
    result = _checked(p, task, n, selected) if shared is None else p.auditor.result()
    if p.no_arm is not None:
        raise ReplayError(p.no_arm[1])
    end = stream.end
    if stream.header.version == 0 and end is None:
        end = legacy_end(stream.meta_as_written, len(p.timings))
    rows = np.flatnonzero(p.scored)
    return Scored(result, _states(selected, arms, p, rows), missing, len(selected), p.timings,
                  end, None if p.digests is None else p.digests[rows],
                  Finishes(selected[:p.keep_finish], p.finish) if p.keep_finish else None)


def _states(selected: list[str], arms: list[Arm], p: Pass, rows: np.ndarray) -> ItemStates:
    excluded = sorted(p.excluded)
    return ItemStates(ids=[selected[i] for i in rows], arms=list(arms), valid=p.valid[rows],
                      right=p.right[rows], excluded=[selected[i] for i in excluded],
                      excluded_reasons={selected[i]: p.excluded[i] for i in excluded},
                      events=p.events[rows])
