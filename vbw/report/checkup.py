"""What `mode=check` prints: the first item as the model would see it, then the findings.

Seeing one rendered item (its three prompts, its schema, its gold) is the fastest way to
catch a task that is valid but not what its author meant; the summary and the listed
problems say whether every other item is sound too.
"""

from __future__ import annotations

import json
import re

from vbw.replay.header import FORMAT
from vbw.report.escape import code, text
from vbw.task.arms import ARM_KINDS, Arm, task_arms
from vbw.task.findings import SHOWN, Audit, summary_line
from vbw.task.runner import Item, Task


def _fence(text: str) -> list[str]:
    """A fenced block that no backtick run inside `text` can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks, text, ticks]


def _first_item(task: Task, item: Item) -> list[str]:
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    out = [f"## First item: {code(item.id)}", ""]
    shown: set[str] = set()
    for arm in arms:
        which = {"unconstrained": "free", "prompt_json": "json", "constrained": "json",
                 "reason_then_constrain": "package"}[arm.kind]
        if which in shown:
            continue
        shown.add(which)
        messages = task.messages(item, arm, free_text="<the unconstrained arm's text>")
        out += [f"### `{which}` prompt (as in {code(arm.key)})", "",
                *_fence(messages[-1]["content"]), ""]
    schema = item.schemas[task.spec.answer_schema]
    out += [f"### Schema {code(task.spec.answer_schema)}", "",
            *_fence(json.dumps(schema, indent=1, ensure_ascii=False)), "",
            "### Gold", "", *_fence(json.dumps(item.gold, ensure_ascii=False)), ""]
    return out


def header_line(task: Task, arms: list[Arm]) -> str:
    """Line 1 of a replay of `task`'s `arms` made elsewhere: what it must carry for vbw to
    check that its texts are of this version of the task (vbw.replay.header)."""
    meta = {"format": FORMAT, "task": task.name, "task_hash": task.generation_hash(),
            "arms": [a.key for a in arms]}
    return json.dumps({"meta": meta}, ensure_ascii=False)


def _replay_header(task: Task, arms: list[Arm]) -> list[str]:
    return ["## Replay header", "",
            "A replay of this task made elsewhere starts with this line: the task's "
            "generation hash (it changes when the task's data, prompts or schemas do) and "
            "the arm keys its item lines use, for the arms this run selects (`arms=` "
            "selects others).", "", *_fence(header_line(task, arms)), ""]


def render_check(task: Task, first: Item | None, audit: Audit, arms: list[Arm]) -> str:
    """The check's page for `task`: its first item, the summary, the header a replay of
    its `arms` carries, then the findings."""
    out = [f"# vbw check: {text(task.name)} ({code(str(task.path))})", ""]
    if first is not None and not audit.problems:
        out += _first_item(task, first)
    out += ["## Summary", "", text(summary_line(audit)), ""]
    if not audit.problems and arms:
        out += _replay_header(task, arms)
    for title, found in (("Problems", audit.check_problems), ("Warnings", audit.check_warnings),
                         ("Checks skipped", audit.not_checked)):
        if found:
            out += [f"## {title}", ""]
            out += [f"- {text(p)}" for p in found[:SHOWN]]
            if len(found) > SHOWN:
                out.append(f"- ... and {len(found) - SHOWN} more")
            out.append("")
    return "\n".join(out)
