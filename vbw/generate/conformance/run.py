"""Every schema under one engine, each compiled and walked in a forked child
(vbw.parallel.limited) with a time limit and an address-space limit, so a schema that
makes an engine's compiler run away (or crash) is that schema's outcome ("timed out",
"crashed"), not the run's.
"""

from __future__ import annotations

import faulthandler
import os
import resource
import signal
from collections.abc import Sequence

import numpy as np

from vbw.generate.conformance.walk import Tokens, check_case
from vbw.generate.engines.base import Engine
from vbw.parallel import Lost, limited
from vbw.score.conformance import Misjudged, SchemaOutcome
from vbw.task.conformance import Case

MEMORY = 4 << 30  # bytes of address space a schema's child may add to the parent's
Checked = tuple[SchemaOutcome, np.ndarray, list[Misjudged]]


def _quiet_limited() -> None:
    """In a schema's child: no native library's messages on the terminal (llama.cpp prints
    a GBNF parse error there; the outcome keeps the reason), and at most MEMORY more
    bytes of address space."""
    faulthandler.disable()  # (pytest's, or a user's: its report would reach the terminal)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
        size = pages * resource.getpagesize() + MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    except (OSError, ValueError):
        pass


def _lost(case: Case, lost: Lost, seconds: float) -> Checked:
    if lost.timed_out:
        why = f"timed out after {seconds:g} s"
    elif os.WIFSIGNALED(lost.status):
        why = f"the engine crashed ({signal.Signals(os.WTERMSIG(lost.status)).name})"
    else:
        why = f"the engine failed (exit status {os.WEXITSTATUS(lost.status)})"
    return (SchemaOutcome(schema_id=case.id, category=case.category, compiled=False,
                          reason=why), np.zeros(0, np.int64), [])


def check_cases(engine: Engine, cases: Sequence[Case], tok: Tokens, seconds: float,
                timed: bool = True, reference: Engine | None = None
                ) -> tuple[list[SchemaOutcome], list[np.ndarray], list[Misjudged]]:
    """Every case under one engine, each in a forked child limited to `seconds` and
    MEMORY more bytes (module docstring), as many at once as vbw.parallel.count() says;
    in this process where fork is not available.

    Args:
        engine: the engine, its vocabulary built (so no child rebuilds it).
        cases: the schemas and instances.
        tok: the model's tokenizer.
        seconds: the time limit of one schema (compile and walks).
        timed: time the masks (check_case).
        reference: the engine that names where an accepted invalid instance went wrong.
    Returns:
        Per case (in order) its outcome and mask times, and every instance judged wrongly.
    """
    def one(case: Case) -> Checked:
        return check_case(engine, case, tok, timed, reference)

    got = limited(one, cases, seconds, _quiet_limited)
    done = [_lost(c, g, seconds) if isinstance(g, Lost) else g for c, g in zip(cases, got)]
    return [d[0] for d in done], [d[1] for d in done], [w for d in done for w in d[2]]
