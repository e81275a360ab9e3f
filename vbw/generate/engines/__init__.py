"""Constraint engines, one module each, registered here once by name.

`outlines`, `llamacpp` (GBNF, module .gbnf) and `llguidance` run on the same in-process
llama.cpp `Runtime`; a new engine is one module plus one line below and one conf/engine
file.
"""

from __future__ import annotations

from vbw.errors import ConfigError
from vbw.generate.engines.base import Constraint, Engine
from vbw.generate.engines.gbnf import LlamaCppEngine, _order_conflicts
from vbw.generate.engines.llguidance import LLGuidanceEngine
from vbw.generate.engines.outlines import OutlinesEngine
from vbw.generate.decode import Whitespace
from vbw.generate.runtime import Runtime

__all__ = ["ENGINES", "Constraint", "Engine", "LLGuidanceEngine", "LlamaCppEngine", "OutlinesEngine",
           "_order_conflicts", "make_engine"]

ENGINES: dict[str, type[Engine]] = {"outlines": OutlinesEngine, "llamacpp": LlamaCppEngine,
                                    "llguidance": LLGuidanceEngine}


def make_engine(name: str, runtime: Runtime, greedy_first: bool = True,
                whitespace: Whitespace = "flexible") -> Engine:
    """Build a constraint engine by name on a shared runtime."""
    try:
        cls = ENGINES[name]
    except KeyError:
        raise ConfigError(
            f"unknown engine {name!r}; valid engines: {', '.join(ENGINES)}"
        ) from None
    return cls(runtime, greedy_first, whitespace)
