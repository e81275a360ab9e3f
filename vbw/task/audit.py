"""Check a task without a model: every prompt renders, every schema is a JSON Schema that
some value satisfies, every gold answer extracts, and under every schema (whichever
`answer_schema` names) a gold-shaped answer is scored right and is valid.

A task's mistakes would otherwise surface late: an undefined `{{ questoin }}` inside a
paid live run, a schema typo as a crash mid-scoring, a checker that can never match as a
quiet 0% accuracy. `mode=check` runs this on every item; live mode runs it before loading
a model, replay mode on the items it scores.

How it works and why: docs/design.md, section vbw.task.audit.
"""

from __future__ import annotations

import hashlib
from typing import Any, TextIO

from vbw.errors import ConfigError, VbwError
from vbw.task.findings import Audit, Finding, Tally, findings, first_error, what_of
from vbw.task.goldshape import Judged, Target, judge, targets
from vbw.task.instance import unsatisfiable
from vbw.task.prompts import plain_fits
from vbw.task.runner import Item, OverBudget, Task
from vbw.task.schema.sources import check_schema, schema_key
from vbw.task.validity import Validators

OK_KEPT = 1 << 16  # "ok" verdicts remembered (Auditor._judge)
SHORT_GOLD = 256  # characters of a str gold that is remembered
_SCALARS = (str, int, float, bool, type(None))
_OK = Judged("ok")


def _render_all(task: Task, item: Item, problems: list[str]) -> None:
    """Each distinct prompt once (an arm's message list would render the free prompt
    again for every arm); the first template error is the item's problem. Plain
    templates whose values are known to fit (vbw.task.prompts.plain_fits) are not built:
    rendering them cannot fail."""
    p, fields, schemas = task.spec.prompts, item.fields, item.schemas
    answer = schemas.get(task.spec.answer_schema, None)
    if (answer is not None and plain_fits(p.free, fields) and plain_fits(p.package, fields, answer)
            and all(plain_fits(p.json_, fields, s) for s in schemas.values())):
        return
    try:
        task.prompts(item)
    except OverBudget:
        raise
    except VbwError as e:
        problems.append(str(e))


class Auditor:
    """The checks item by item, in any order: `add` each item with its position in the
    task, then `result()`. Findings listed by item are put in position order, so a
    streamed replay (vbw.score.stream) gets the Audit that `audit` gives on the same items
    in task order, except for problems: their wording depends on which item came first
    (a schema's problem is named once, on its first item), so a caller that sees
    `has_problems` re-runs `audit` in order for the exact message."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.problems: list[str] = []
        self.seen: dict[bytes, str | None] = {}  # schema digest -> its problem, if any
        self._last: list[tuple[Any, bytes]] = []
        self.targets = [t for t in targets(task) if t.parts is not None]
        self.unplain = [t for t in targets(task) if t.parts is None]
        self.tallies = {(name, t.field): Tally() for name in task.schema_names
                        for t in self.targets}
        self.validators = Validators()  # validity as scoring decides it
        self.items = 0
        self.checked: set[int] = set()
        self._ok: set[tuple[bytes, bytes, type, Any]] = set()  # see _judge

    def _digest(self, schema: dict[str, Any]) -> bytes:
        """A digest of the schema's key (two schemas differ iff their keys do): a static
        schema is one object, serialised once; a long replay of per-item schemas keeps
        16 bytes per distinct schema, not its text."""
        for obj, digest in self._last:
            if obj is schema:
                return digest
        digest = hashlib.blake2b(schema_key(schema).encode(), digest_size=16).digest()
        self._last.insert(0, (schema, digest))
        del self._last[4:]
        return digest

    def add(self, item: Item, position: int) -> None:
        task, seen = self.task, self.seen
        self.items += 1
        _render_all(task, item, self.problems)
        for name, schema in item.schemas.items():
            key = self._digest(schema)
            if key not in seen:
                seen[key] = _schema_problem(schema)
                if seen[key]:
                    self.problems.append(f"{task.path}: schemas.{name}: item {item.id}: "
                                         f"{seen[key]}")
            if seen[key] is None:
                for target in self.targets:
                    judged = self._judge(item, target, schema, key)
                    self.tallies[name, target.field].add(position, item.id, judged)
                    if judged.outcome != "unbuilt":
                        self.checked.add(position)

    def _judge(self, item: Item, target: Target, schema: dict[str, Any], key: bytes) -> Judged:
        """`judge`, remembering an "ok" by what decides it: the gold-shaped answer is
        built from the schema and the gold alone, and scored against the gold and the
        answer schema (Task.is_correct), so items with an equal scalar gold (GSM8K's
        numbers, a classification's labels) under equal schemas share the verdict.
        Only "ok" is kept (a finding's evidence names its own item), and at most
        OK_KEPT of them."""
        gold = target.gold(item)
        memo = None
        if type(gold) in _SCALARS and (type(gold) is not str or len(gold) <= SHORT_GOLD):
            answer = self._digest(item.schemas[self.task.spec.answer_schema])
            # a float by its repr (-0.0 is not 0.0 here); an int as itself (its repr
            # may be refused beyond 4,300 digits); a str only if short (memory)
            memo = (key, answer, target.field, type(gold),
                    repr(gold) if type(gold) is float else gold)
            if memo in self._ok:
                return _OK
        judged = judge(self.task, item, schema, target, self.validators)
        if memo is not None and judged.outcome == "ok":
            if len(self._ok) >= OK_KEPT:
                self._ok.clear()
            self._ok.add(memo)
        return judged

    def state(self) -> dict[str, Any]:
        """What the checks gathered, for `merge` into another Auditor of the same task (a
        second process that checked other items: vbw.score.split)."""
        return {"problems": self.problems, "seen": self.seen, "tallies": self.tallies,
                "items": self.items, "checked": self.checked}

    def merge(self, state: dict[str, Any]) -> None:
        """Add another Auditor's `state()` (disjoint items): counts add up, lists join
        (findings are put in position order by `result`), the first evidence is the one
        at the smaller position. Problems keep no order: a caller re-runs `audit` in task
        order for their exact words (see the class docstring)."""
        self.problems += state["problems"]
        for key, problem in state["seen"].items():
            self.seen.setdefault(key, problem)
        for name, other in state["tallies"].items():
            mine = self.tallies[name]
            mine.checked += other.checked
            mine.unbuilt += other.unbuilt
            for what, failed in other.failed.items():
                mine.failed[what] += failed
            for what, first in other.first.items():
                if what not in mine.first or first[0] < mine.first[what][0]:
                    mine.first[what] = first
        self.items += state["items"]
        self.checked |= state["checked"]

    def result(self) -> Audit:
        found: list[Finding] = []
        not_checked: list[str] = []
        for t in self.unplain:
            not_checked.append(f"{self.task.path}: {t.where} {t.path!r} is not a plain "
                               f"dotted path: no gold-shaped {what_of(t.field)} is built")
        for (name, field), tally in self.tallies.items():
            found += findings(self.task, name, field, tally)
            if tally.unbuilt:
                pos, item_id, why = min(tally.unbuilt)
                not_checked.append(f"{self.task.path}: schemas.{name}: no gold-shaped "
                                   f"{what_of(field)} built on {len(tally.unbuilt)} item(s), "
                                   f"e.g. item {item_id}: {why}")
        return Audit(task=self.task.name, items=self.items, schemas=len(self.seen),
                     gold_checked=len(self.checked), problems=list(self.problems),
                     findings=found, not_checked=not_checked)


def _schema_problem(schema: dict[str, Any]) -> str | None:
    """Why scoring against `schema` is impossible: not a JSON Schema, or no instance."""
    problem = check_schema(schema)
    if problem is not None:
        return problem
    why = unsatisfiable(schema)
    return None if why is None else ("unsatisfiable (no JSON value is valid, so no arm can "
                                     f"give a valid answer): {why}")


def audit(task: Task, items: list[Item]) -> Audit:
    """Run every check on `items` (see the module docstring)."""
    auditor = Auditor(task)
    for position, item in enumerate(items):
        auditor.add(item, position)
    return auditor.result()


def audit_or_fail(task: Task, items: list[Item], err: TextIO | None) -> Audit:
    """The task checks before a run scores or generates: problems (scoring is impossible)
    stop the run; heuristic findings are warnings, printed to `err` unless it is None.
    Used by mode=live (vbw.modes.live); replays are checked as they are scored
    (vbw.score.stream)."""
    result = audit(task, items)
    if result.problems:
        raise ConfigError(first_error(result))
    if err is not None:
        warn_findings(result, err)
    return result


def warn_findings(result: Audit, err: TextIO) -> None:
    for w in result.warnings:
        print(f"vbw: warning: {w}", file=err)
