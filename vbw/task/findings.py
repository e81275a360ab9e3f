"""What the task checks found (vbw.task.audit): per schema and target (the answer or a
field), the gold-shaped verdicts counted item by item, and the findings, summary and
first error made from them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from vbw.task.goldshape import Example, Judged, targets
from vbw.task.runner import Task

SHOWN = 10  # problems listed in full; the rest are counted


class Finding(BaseModel):
    """A heuristic finding on one schema: the gold-shaped answer is scored wrong, or is
    invalid, on `failed` of the `checked` items (`ids`: the first of them), with the
    evidence of the first. Fatal in mode=check when it holds on every item; a warning in
    a run (scoring stays possible: vbw.cli.job)."""

    model_config = ConfigDict(extra="forbid")
    schema_name: str
    field: str | None = None  # one of the task's fields; None: its answer
    what: Literal["wrong", "invalid"]
    failed: int
    checked: int
    ids: list[str]
    example: Example
    message: str

    @property
    def everywhere(self) -> bool:
        return self.failed == self.checked


class Audit(BaseModel):
    """What the checks found: counts; `problems` make scoring impossible (fatal in every
    mode); `findings` are heuristic (see Finding); `not_checked` says which gold-shaped
    checks were skipped and why."""

    model_config = ConfigDict(extra="forbid")
    task: str
    items: int
    schemas: int
    gold_checked: int
    problems: list[str] = []
    findings: list[Finding] = []
    not_checked: list[str] = []

    @property
    def check_problems(self) -> list[str]:
        """What fails mode=check: the problems, then findings that hold on every item."""
        return self.problems + [f.message for f in self.findings if f.everywhere]

    @property
    def check_warnings(self) -> list[str]:
        return [f.message for f in self.findings if not f.everywhere]

    @property
    def warnings(self) -> list[str]:
        """What a run warns of (printed once, and in report.json's task_check)."""
        return [f.message for f in self.findings]


class Tally:
    """One schema's gold-shaped checks: counts, failing (position, id), first evidence."""

    def __init__(self) -> None:
        self.checked = 0
        self.failed: dict[str, list[tuple[int, str]]] = {"wrong": [], "invalid": []}
        self.first: dict[str, tuple[int, Example]] = {}
        self.unbuilt: list[tuple[int, str, str]] = []

    def add(self, position: int, item_id: str, judged: Judged) -> None:
        if judged.outcome == "unbuilt":
            self.unbuilt.append((position, item_id, judged.reason))
            return
        self.checked += 1
        if judged.outcome == "ok" or judged.example is None:
            return
        self.failed[judged.outcome].append((position, item_id))
        if judged.outcome not in self.first or position < self.first[judged.outcome][0]:
            self.first[judged.outcome] = (position, judged.example)


def first_ids(ids: list[str], quote: bool = False, shown: int = 5) -> str:
    """The first `shown` ids (repr'd with `quote`) and how many more, for one-line messages."""
    more = f" (+{len(ids) - shown} more)" if len(ids) > shown else ""
    return ", ".join(repr(i) if quote else i for i in ids[:shown]) + more


def what_of(field: str | None) -> str:
    return "answer" if field is None else f"value of field {field}"


def findings(task: Task, name: str, field: str | None, tally: Tally) -> list[Finding]:
    """A Finding per failing question (right? valid?), its message carrying the evidence."""
    t = next(t for t in targets(task) if t.field == field)
    gold = "the gold" if field is None else f"fields.{field}.gold"
    where = (f"{task.path}: schemas.{name}: the gold-shaped {what_of(field)} ({gold} at "
             f"{t.where} {t.path!r}, other required properties filled)")
    out = []
    for what, failed in tally.failed.items():
        if not failed:
            continue
        ids = [i for _, i in sorted(failed)]
        n, k = tally.checked, len(ids)
        if what == "wrong":
            head = (f"{where} is never scored right ({n} items): the checker, coercion or "
                    "json path cannot match the gold" if k == n else
                    f"{where} is scored wrong on {k} of {n} items: {first_ids(ids)}")
        else:
            head = (f"{where} does not validate on {k} of {n} items: the schema cannot hold "
                    "the gold there, so no schema-valid answer can be scored right"
                    if k == n else f"{where} does not validate on {k} of {n} items (a "
                    f"constrained arm cannot be right there): {first_ids(ids)}")
        example = tally.first[what][1]
        out.append(Finding(schema_name=name, field=field, what=what, failed=k, checked=n,
                           ids=ids[:SHOWN],
                           example=example, message=f"{head}; e.g. {example.line()}"))
    return out


def summary_line(a: Audit) -> str:
    return (f"{a.task}: {a.items} items, {a.schemas} distinct schema(s), gold-shaped answer "
            f"checked on {a.gold_checked}, {len(a.check_problems)} problem(s), "
            f"{len(a.check_warnings)} warning(s), {len(a.not_checked)} check(s) skipped")


def first_error(a: Audit, check_mode: bool = False) -> str:
    """The one line a failed check exits with (mode=check: its problems and the findings
    that hold on every item; a run: the problems only)."""
    problems = a.check_problems if check_mode else a.problems
    more = f" (+{len(problems) - 1} more; mode=check lists them)" if len(problems) > 1 \
        else ""
    return f"{problems[0]}{more}"


