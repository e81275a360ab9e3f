"""Constraint engines, one module each, each registering itself in ENGINES by name.

`outlines`, `llamacpp` (GBNF, module .gbnf) and `llguidance` run on the same in-process
llama.cpp `Runtime`. A new engine is one module in this package (an `Engine` subclass with
`@ENGINES.register`), one conf/engine file and its tests: ENGINES imports every module
here when first asked for a name it does not know, and then, for a name none of them has,
reads the entry points of group `vbw.engines`, through which an installed package adds an
engine (its module and its conf file on Hydra's search path: tests/generate/test_kinds.py;
a module dropped here: tests/test_registry.py). vbw.cli.job checks `engine.name` against
ENGINES before any work. The imports below only keep the names importable from here.
"""

from __future__ import annotations

from vbw.errors import ConfigError
from vbw.generate.engines.base import ENGINES, Constraint, Engine
from vbw.generate.engines.outlines import OutlinesEngine  # first: the order engines list in
from vbw.generate.engines.gbnf import LlamaCppEngine, _order_conflicts
from vbw.generate.engines.llguidance import LLGuidanceEngine
from vbw.generate.decode import Whitespace
from vbw.generate.runtime import Runtime

__all__ = ["ENGINES", "Constraint", "Engine", "LLGuidanceEngine", "LlamaCppEngine", "OutlinesEngine",
           "_order_conflicts", "make_engine"]


def make_engine(name: str, runtime: Runtime, greedy_first: bool = True,
                whitespace: Whitespace = "flexible") -> Engine:
    """Build a constraint engine by name on a shared runtime."""
    try:
        cls = ENGINES.get(name)
    except ValueError:
        raise ConfigError(
            f"unknown engine {name!r}; valid engines: {', '.join(ENGINES.kinds)}"
        ) from None
    return cls(runtime, greedy_first, whitespace)
