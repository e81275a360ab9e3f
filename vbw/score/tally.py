"""What a scoring pass gathers per item, as one dataclass whose merge follows from its fields.

Each field says, in its metadata, how it is made for a pass (`new`) and how the result of
a pass over other records of the same replay is added to it (`Combine`): a second process
(vbw.score.split, vbw.score.written) sends its `state()` and this process `merge`s it. A
figure per item is added here, once: a field and the line of `Tally.add_scored` that
computes it, plus its report line; the fork payloads are derived from the fields.
May import vbw.task and lower score modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

from vbw.score.answers import AnswerParts, item_rows
from vbw.score.cost import cost_row
from vbw.score.cost import new_rows as cost_rows
from vbw.score.digest import NO_TEXT, text_digest
from vbw.score.interventions import empty_rows, event_row
from vbw.score.sampled import canonical, majority, vote_code
from vbw.score.shown import Lowest, Showing
from vbw.score.states import arm_states
from vbw.score.tax import new_rows
from vbw.task.fields import ABSENT


class Combine(Enum):
    """How a field of another pass's state is added to this pass's."""

    EITHER = "either"  # boolean arrays by position: or
    ROWS = "rows"      # arrays by position: the other's rows where its mask holds
    UNION = "union"    # dicts by position: the other's entries added
    FIRST = "first"    # (position, ...) or None: the one at the smaller position
    NESTED = "nested"  # an object with its own state() and merge()


class Size(NamedTuple):
    """What a pass's fields are made for: positions, arms, what it keeps for the reports
    (vbw.score.shown), whether text digests are kept (vbw.score.digest)."""

    n: int
    arms: int
    showing: Showing = Showing()
    digests: bool = False
    fields: int = 0  # the task's fields (vbw.task.fields)
    answers: bool = False  # whether answers.csv's rows are kept (vbw.score.answers)
    samples: int = 1  # k: samples per item and arm (the replay header's decoding.samples)


def _meta(combine: Combine, new: Callable[[Size], Any], mask: str = "scored",
          states: bool = False) -> Any:
    return field(metadata={"combine": combine, "new": new, "mask": mask, "states": states})


def per_item(new: Callable[[Size], Any], mask: str = "scored", states: bool = False) -> Any:
    """An array with a row per position (or per kept position), filled where `mask` (a
    boolean field) holds; `states`: its scored rows go into ItemStates under its name."""
    return _meta(Combine.ROWS, new, mask, states)


def either(new: Callable[[Size], Any]) -> Any:
    return _meta(Combine.EITHER, new)


def union() -> Any:
    return _meta(Combine.UNION, lambda s: {})


def first() -> Any:
    return _meta(Combine.FIRST, lambda s: None)


def nested(new: Callable[[Size], Any]) -> Any:
    return _meta(Combine.NESTED, new)


def _per_sample(s: Size, dtype: Any, fill: Any) -> np.ndarray | None:
    return np.full((s.n, s.arms, s.samples), fill, dtype=dtype) if s.samples > 1 else None


@dataclass
class Tally:
    """Per position among the selected items: what scoring found (see the module
    docstring). `auditor` is the pass's own task checks (vbw.task.audit.Auditor), given."""

    held: np.ndarray = either(lambda s: np.zeros(s.n, dtype=bool))
    scored: np.ndarray = either(lambda s: np.zeros(s.n, dtype=bool))
    valid: np.ndarray = per_item(lambda s: np.zeros((s.n, s.arms), dtype=np.int8), states=True)
    right: np.ndarray = per_item(lambda s: np.zeros((s.n, s.arms), dtype=bool), states=True)
    # per field, a code of vbw.task.fields.FIELD_CODES; None: the task has no fields
    field_codes: np.ndarray | None = per_item(
        lambda s: np.full((s.n, s.arms, s.fields), ABSENT, dtype=np.int8) if s.fields
        else None, states=True)
    # interventions (vbw.score.interventions)
    events: np.ndarray = per_item(lambda s: empty_rows(s.n, s.arms), states=True)
    # the grammar's tax in nats (vbw.score.tax); NaN: not recorded
    tax: np.ndarray = per_item(lambda s: new_rows(s.n, s.arms), states=True)
    # tokens, seconds, time to first token, compile seconds (vbw.score.cost); NaN: none
    cost: np.ndarray = per_item(lambda s: cost_rows(s.n, s.arms), states=True)
    # k > 1 samples per item and arm (vbw.score.samples): each sample's validity,
    # correctness and tax, and the majority vote's code (VOTE_*); None: one sample
    s_valid: np.ndarray | None = per_item(lambda s: _per_sample(s, np.int8, 0), states=True)
    s_right: np.ndarray | None = per_item(lambda s: _per_sample(s, bool, False), states=True)
    s_tax: np.ndarray | None = per_item(lambda s: _per_sample(s, float, np.nan), states=True)
    vote: np.ndarray | None = per_item(
        lambda s: np.zeros((s.n, s.arms), dtype=np.int8) if s.samples > 1 else None,
        states=True)
    digests: np.ndarray | None = per_item(
        lambda s: np.full((s.n, s.arms), NO_TEXT, dtype="S16") if s.digests else None)
    # the first positions held: finish reasons (vbw.score.finish), what the reports show
    finish: Lowest = nested(lambda s: Lowest(s.showing.listed))
    shown: Lowest = nested(lambda s: Lowest(s.showing.detailed))
    excluded: dict[int, str] = union()  # position -> why the replay excluded the item
    bad_row: tuple[int, Any] | None = first()  # (position, the error building its row)
    no_arm: tuple[int, str] | None = first()   # (position, the message of a lacking arm)
    auditor: Any = nested(lambda s: None)
    answers: AnswerParts | None = nested(
        lambda s: AnswerParts(s.samples) if s.answers else None)

    @classmethod
    def new(cls, size: Size, **given: Any) -> Tally:
        """Every field made for `size`, but those `given`."""
        made = {f.name: f.metadata["new"](size) for f in fields(cls) if f.name not in given}
        return cls(**made, **given)

    def add_scored(self, pos: int, p: Any, rec: Any, item: Any) -> None:
        """The figures of an item that has every arm (`p`: the pass, vbw.score.stream.Pass,
        for the task, arms and validators; `rec`: its ScoredRecord)."""
        frows = [] if self.field_codes is not None else None
        answers = [] if self.answers is not None or self.vote is not None else None
        vrow, rrow = arm_states(p.task, item, rec.texts, p.arms, p.validators, p.keep(pos),
                                frows, answers)
        rows = None if self.answers is None else [
            item_rows(p.arms, rec, item, vrow, rrow, answers, frows, p.task.fields.names,
                      1 if self.vote is not None else 0)]
        if self.vote is not None:
            self._add_samples(pos, p, rec, item, vrow, rrow, answers, rows)
        self.valid[pos], self.right[pos] = vrow, rrow
        if frows is not None:
            self.field_codes[pos] = [r.codes for r in frows]
        if rows is not None:
            self.answers.add(pos, "".join(rows))
        if self.digests is not None:
            self.digests[pos] = [text_digest(rec.texts.get(a.key)) for a in p.arms]
        if rec.interventions:
            self.events[pos] = event_row(rec.texts, rec.interventions, p.arms, p.steps)
        if rec.taxes:
            self.tax[pos] = [rec.taxes.get(a.key, np.nan) for a in p.arms]
        if rec.arms is not None:
            self.cost[pos] = cost_row(rec, p.arms)

    def _add_samples(self, pos: int, p: Any, rec: Any, item: Any, vrow: list[int],
                     rrow: list[bool], answers: list[Any], csv: list[str] | None) -> None:
        """Every sample's validity, correctness and tax (sample 1's as scored), and the
        majority vote over the samples' canonical answers; each sample's answers.csv rows
        added to `csv` (sample 1's are there)."""
        rows = [(vrow, rrow, answers, rec)]
        for i, extra in enumerate(rec.samples, start=2):
            said: list[Any] = []
            frows = [] if csv is not None and self.field_codes is not None else None
            v, r = arm_states(p.task, item, extra.texts, p.arms, p.validators, None, frows,
                              said)
            rows.append((v, r, said, extra))
            if csv is not None:
                csv.append(item_rows(p.arms, extra, item, v, r, said, frows,
                                     p.task.fields.names, i))
        for i, (v, r, _, sample) in enumerate(rows):
            self.s_valid[pos, :, i], self.s_right[pos, :, i] = v, r
            if sample.taxes:
                self.s_tax[pos, :, i] = [sample.taxes.get(a.key, np.nan) for a in p.arms]
        for j in range(len(p.arms)):
            self.vote[pos, j] = vote_code(majority([canonical(a[j]) for _, _, a, _ in rows],
                                                   [r[j] for _, r, _, _ in rows]))

    def state(self) -> dict[str, Any]:
        """What this pass gathered, for `merge` into the pass of another process: each
        per-item array as the rows its mask selects."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value, how = getattr(self, f.name), f.metadata["combine"]
            if how is Combine.ROWS and value is not None:
                value = value[getattr(self, f.metadata["mask"])[:len(value)]]
            elif how is Combine.NESTED and value is not None:
                value = value.state()
            out[f.name] = value
        return out

    def merge(self, st: dict[str, Any]) -> None:
        """Add the `state()` of a pass that scored other records of the same replay."""
        for f in fields(self):
            mine, theirs, how = getattr(self, f.name), st[f.name], f.metadata["combine"]
            if how is Combine.ROWS:
                if mine is not None:
                    mine[st[f.metadata["mask"]][:len(mine)]] = theirs
            elif how is Combine.EITHER:
                mine |= theirs
            elif how is Combine.UNION:
                mine.update(theirs)
            elif how is Combine.FIRST:
                if theirs is not None and (mine is None or theirs[0] < mine[0]):
                    setattr(self, f.name, theirs)
            elif mine is not None:
                mine.merge(theirs)

    def states(self, rows: np.ndarray) -> dict[str, Any]:
        """The per-item arrays marked for ItemStates, at `rows` (positions scored)."""
        return {f.name: None if getattr(self, f.name) is None else getattr(self, f.name)[rows]
                for f in fields(self) if f.metadata["states"]}
