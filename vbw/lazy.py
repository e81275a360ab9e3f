"""Package names loaded on first use (PEP 562's module `__getattr__`).

A package's `__init__` that imports its modules makes importing any one module of the
package import them all. vbw's `vbw` process imports a few light modules of vbw.task,
vbw.score and vbw.report while it composes the config, and leaves the rest to a warm
worker (vbw.cli.warm_worker): so those packages export their names through `lazy_exports`, which
imports a name's module when the name is first read."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that reads `name` from module `where[name]`."""

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
