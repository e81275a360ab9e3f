"""mode=check's engine lines: with the live extra installed, each engine of the run's
`conformance` block is walked over the gold-shaped answer of every checked item, and a
line says when an engine rejects one (a constrained arm on it would force the model away
from a right answer there) or cannot compile an item's schema."""

from __future__ import annotations

from vbw.config import ConformanceConfig
from vbw.errors import VbwError, one_line
from vbw.generate.conformance.engines import ready
from vbw.generate.conformance.run import check_cases
from vbw.generate.conformance.walk import Tokens
from vbw.score.conformance import Misjudged, SchemaOutcome
from vbw.task.conformance import Case, task_cases
from vbw.task.runner import Item, Task

CHECK_SECONDS = 10.0  # a schema's limit per engine here (mode=conformance: schema_seconds)


def gold_cases(task: Task, items: list[Item]) -> list[Case]:
    """The task's schemas with their gold-shaped answers only."""
    cases = task_cases(task, items)
    return [c._replace(instances=[i for i in c.instances if i.keyword == "gold"])
            for c in cases]


def _line(label: str, task: Task, n: int, wrong: list[Misjudged],
          outcomes: list[SchemaOutcome]) -> str | None:
    rejected = [f for f in wrong if f.kind == "rejected valid"]
    items = {i for f in rejected for i in f.items}
    refused = [o for o in outcomes if not o.compiled]
    if not items and not refused:
        return None
    parts = []
    if items:
        f = rejected[0]
        where = ("at the end" if f.token is None
                 else f"at token {f.token} (char {f.char}, {f.piece!r})")
        parts.append(f"rejects the valid gold-shaped answer of {len(items)} of {n} item(s), "
                     f"e.g. item {f.items[0]}: {f.text} cut {where}; a constrained arm on "
                     "it will force the model away from a right answer there")
    if refused:
        parts.append(f"cannot compile {len(refused)} schema(s), e.g. {refused[0].schema_id}: "
                     f"{refused[0].reason[:200]}")
    return (f"warning: engine {label} " + "; ".join(parts)
            + f" (details: vbw mode=conformance task={task.name})")


def engine_lines(task: Task, items: list[Item], cfg: ConformanceConfig, tok: Tokens
                 ) -> list[str]:
    """One line per engine and whitespace policy that rejects a gold-shaped answer or
    cannot compile a schema of `items` (none when every engine takes them all).

    Args:
        task: the checked task.
        items: its checked items.
        cfg: the run's `conformance` block (engines, whitespace, time limit).
        tok: the model's tokenizer.
    Returns:
        The warning lines.
    """
    from vbw.generate.engines import make_engine

    cases = [c for c in gold_cases(task, items) if c.instances]
    lines = []
    for name in cfg.engines:
        for ws in cfg.whitespace:
            try:
                engine = ready(make_engine(name, tok.runtime, True, ws))
            except VbwError as e:
                lines.append(f"warning: engine {name} ({ws}) was not checked: {one_line(e)}")
                continue
            outcomes, _, wrong = check_cases(engine, cases, tok,
                                             min(cfg.schema_seconds, CHECK_SECONDS), timed=False)
            line = _line(f"{name} ({ws})", task, len(items), wrong, outcomes)
            if line is not None:
                lines.append(line)
    return lines
