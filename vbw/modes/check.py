"""mode=check: every task's checks, the first item's prompts, schema and gold; nothing
is generated or scored. With the live extra installed, each engine of the `conformance`
block is also walked over every item's gold-shaped answer (vbw.generate.conformance.gold):
a line per engine that rejects one or cannot compile a schema."""

from __future__ import annotations

import importlib.util
from typing import Any

from vbw.errors import ConfigError, VbwError, one_line
from vbw.modes import MODES, Job, Mode
from vbw.report.checkup import render_check
from vbw.task.audit import audit
from vbw.task.findings import Audit, first_error


def _tokenizer(job: Job) -> tuple[Any, str | None]:
    """The tokenizer the engine lines walk, or None and why not (None, None: the live
    extra is not installed, or no engine is listed: nothing is said)."""
    if not job.cfg.conformance.engines:
        return None, None
    if importlib.util.find_spec("llama_cpp") is None:
        return None, None
    from vbw.generate.conformance.engines import open_tokenizer

    try:
        return open_tokenizer(job.cfg.conformance.tokenizer)[0], None
    except VbwError as e:
        return None, f"note: the engines were not checked: {one_line(e)}"


def check_tasks(job: Job) -> int:
    """mode=check: every task's checks, the first item's prompts, schema and gold, and the
    header line a replay of its selected arms made elsewhere carries (its task hash and
    arm keys); with the live extra, a line per engine that would reject a gold-shaped
    answer. It fails (exit 2) on a problem and on a finding that holds on every item."""
    failed: list[Audit] = []
    tok, why, opened = None, None, False
    for task in job.tasks:
        items = task.items(job.n_of(task))
        result = audit(task, items)
        print(render_check(task, items[0] if items else None, result, job.arms_of(task)),
              file=job.out)
        if result.check_problems:
            failed.append(result)
            continue
        if not opened:
            tok, why = _tokenizer(job)
            opened = True
        if why:
            print(why, file=job.out)
        elif tok is not None:
            from vbw.generate.conformance.gold import engine_lines

            for line in engine_lines(task, items, job.cfg.conformance, tok):
                print(line, file=job.out)
    if failed:
        raise ConfigError(first_error(failed[0], check_mode=True))
    return 0


@MODES.register
class Check(Mode):
    name = "check"

    @staticmethod
    def run(job: Job) -> int:
        return check_tasks(job)
