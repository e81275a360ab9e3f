"""Check a task without a model: every prompt renders, every schema is a JSON Schema, every
gold answer extracts, and the checker can say "right" at all.

A task's mistakes would otherwise surface late: an undefined `{{ questoin }}` inside a
paid live run, a schema typo as a crash mid-scoring, a checker that can never match as a
quiet 0% accuracy. `mode=check` runs this on every item; live mode runs it before loading
a model, replay mode on the items it scores.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict

from vbw.errors import VbwError
from vbw.task.runner import Item, OverBudget, Task
from vbw.task.schemas import check_schema, schema_key
from vbw.task.validity import Validators

SHOWN = 10  # problems listed in full; the rest are counted


class Audit(BaseModel):
    """What mode=check found: counts, the problems (fatal) and warnings (suspicious)."""

    model_config = ConfigDict(extra="forbid")
    task: str
    items: int
    schemas: int
    gold_checked: int
    problems: list[str] = []
    warnings: list[str] = []


def _gold_shaped(kind: str, gold: Any) -> Any:
    """An answer the checker should call right for `gold`, or None when none can be built
    (a regex checker's gold is a pattern, not an answer)."""
    if kind in ("numeric", "string", "identity"):
        return gold
    if kind == "membership":
        return gold[0] if isinstance(gold, list) and gold else None
    if kind == "call_args":
        return _call_args_example(gold)
    return None


def _call_args_example(gold: Any) -> Any:
    """Per parameter the first allowed value; allowed objects (nested, also inside lists)
    hold allowed-value lists themselves, so they are built the same way."""
    if not isinstance(gold, dict):
        return None
    out: dict[str, Any] = {}
    for param, allowed in gold.items():
        allowed = allowed if isinstance(allowed, list) else [allowed]
        chosen = next((a for a in allowed if a != ""), None)
        if chosen is None:
            continue  # optional and absent is right
        out[param] = _example_value(chosen)
    return out


def _example_value(allowed: Any) -> Any:
    if isinstance(allowed, dict):
        return _call_args_example(allowed)
    if isinstance(allowed, list):
        return [_example_value(a) for a in allowed]
    return allowed


def _place(path: str, answer: Any) -> dict[str, Any] | None:
    """The JSON object whose `path` (a plain dotted JMESPath) is `answer`."""
    if path == "@":
        return answer if isinstance(answer, dict) else None
    parts = path.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    obj: Any = answer
    for part in reversed(parts):
        obj = {part: obj}
    return obj


def _render_all(task: Task, item: Item, problems: list[str]) -> None:
    """Each distinct prompt once (an arm's message list would render the free prompt
    again for every arm); the first template error is the item's problem."""
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
        self.wrong: list[tuple[int, str]] = []
        self.invalid: list[tuple[int, str]] = []
        self.validators = Validators()  # validity as scoring decides it
        self.items = self.checked = 0

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
                seen[key] = check_schema(schema)
                if seen[key]:
                    self.problems.append(f"{task.path}: schemas.{name}: item {item.id}: "
                                         f"{seen[key]}")
        obj = _place(task.spec.extract.json_.path,
                     _gold_shaped(task.spec.check.kind, item.gold))
        if obj is None:
            return
        self.checked += 1
        answer_schema = item.schemas[task.spec.answer_schema]
        if not task.is_correct(task.json_answer(obj), item):
            self.wrong.append((position, item.id))
        elif seen[self._digest(answer_schema)] is None and \
                not self.validators.is_valid(answer_schema, obj):
            self.invalid.append((position, item.id))

    def result(self) -> Audit:
        problems, warnings = list(self.problems), []
        wrong = [i for _, i in sorted(self.wrong)]
        invalid = [i for _, i in sorted(self.invalid)]
        _gold_findings(self.task, self.checked, wrong, invalid, problems, warnings)
        return Audit(task=self.task.name, items=self.items, schemas=len(self.seen),
                     gold_checked=self.checked, problems=problems, warnings=warnings)


def audit(task: Task, items: list[Item]) -> Audit:
    """Run every check on `items` (see the module docstring)."""
    auditor = Auditor(task)
    for position, item in enumerate(items):
        auditor.add(item, position)
    return auditor.result()


def first_ids(ids: list[str], quote: bool = False, shown: int = 5) -> str:
    """The first `shown` ids (repr'd with `quote`) and how many more, for one-line messages."""
    more = f" (+{len(ids) - shown} more)" if len(ids) > shown else ""
    return ", ".join(repr(i) if quote else i for i in ids[:shown]) + more


def _gold_findings(task: Task, checked: int, wrong: list[str], invalid: list[str],
                   problems: list[str], warnings: list[str]) -> None:
    """A checker that never says right is fatal; one that fails some items is suspicious."""
    where = (f"{task.path}: check: the gold-shaped JSON answer (the gold placed at "
             f"extract.json.path {task.spec.extract.json_.path!r})")
    if checked and len(wrong) == checked:
        problems.append(f"{where} is never scored right ({checked} items): the checker, "
                        "coercion or json path cannot match the gold")
    elif wrong:
        warnings.append(f"{where} is scored wrong on {len(wrong)} of {checked} items: "
                        f"{first_ids(wrong)}")
    if invalid:
        what = (f"{task.path}: schemas.{task.spec.answer_schema}: the gold-shaped answer "
                f"does not validate on {len(invalid)} of {checked} items")
        if len(invalid) == checked:  # no valid output can be right: the contract is broken
            problems.append(f"{what}: schema and extract.json.path "
                            f"{task.spec.extract.json_.path!r} disagree, so no schema-valid "
                            "answer can be scored right")
        else:
            warnings.append(f"{what} (a constrained arm cannot be right there): "
                            f"{first_ids(invalid)}")


def summary_line(a: Audit) -> str:
    return (f"{a.task}: {a.items} items, {a.schemas} distinct schema(s), gold-shaped answer "
            f"checked on {a.gold_checked}, {len(a.problems)} problem(s), "
            f"{len(a.warnings)} warning(s)")


def first_error(a: Audit) -> str:
    """The one line a failed check exits with."""
    more = f" (+{len(a.problems) - 1} more; mode=check lists them)" if len(a.problems) > 1 \
        else ""
    return f"{a.problems[0]}{more}"
