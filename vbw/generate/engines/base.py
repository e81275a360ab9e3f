"""What every constraint engine is: a per-schema compile cache yielding `Constraint`s,
each of which starts a fresh `TokenRule` (vbw.generate.decode) per generation.

Property order is part of the schema's contract, so no engine ever sorts keys: the
schema's own order is the order the output must follow.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from vbw.errors import UnsupportedSchema
from vbw.generate.completion import TokenRule
from vbw.generate.decode import Whitespace
from vbw.generate.runtime import Runtime
from vbw.registry import Registry
from vbw.task.schema.sources import schema_key


class Constraint:
    """A compiled schema; `rule()` starts one generation's `TokenRule` (fresh state)."""

    def rule(self) -> TokenRule:
        """Start one generation's rule, with fresh state.

        Returns:
            The TokenRule the decode loop asks at every step.
        """
        raise NotImplementedError


class Engine:
    """Base: a per-schema compile cache; the in-process backend (vbw.generate.local)
    decodes with the constraint's `rule()`. A kind sets `name` (the conf/engine file's
    `name`) and `requires` (the distributions whose versions replay headers record), and
    registers with `@ENGINES.register`."""

    name: ClassVar[str] = "none"
    requires: ClassVar[tuple[str, ...]] = ()  # distributions it runs on (provenance)

    def __init__(self, runtime: Runtime, greedy_first: bool = True,
                 whitespace: Whitespace = "flexible") -> None:
        self.runtime = runtime
        self.greedy_first = greedy_first  # the exact greedy shortcut (vbw.generate.decode)
        # flexible: the engine's own JSON whitespace rule; compact: none between tokens
        self.whitespace = whitespace
        self._cache: dict[str, Constraint | UnsupportedSchema] = {}

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        """Compile `schema`; what an engine kind implements (`compile` caches it). Raise
        UnsupportedSchema (`self.unsupported(reason)`) for a schema it cannot enforce.

        Args:
            schema: the JSON Schema, its property order kept.
            key: the schema's cache key (vbw.task.schema.sources.schema_key).
        Returns:
            The compiled constraint.
        """
        raise NotImplementedError

    def compile(self, schema: Mapping[str, Any]) -> tuple[Constraint, float]:
        """Compile (or fetch from cache) a schema. Raises UnsupportedSchema, also on a
        cached failure.

        Args:
            schema: the JSON Schema.
        Returns:
            (constraint, seconds spent now); the seconds are 0.0 on a cache hit.
        """
        key = schema_key(schema)
        hit = self._cache.get(key)
        if isinstance(hit, UnsupportedSchema):
            raise hit
        if hit is not None:
            return hit, 0.0
        start = time.perf_counter()
        try:
            constraint = self._compile(schema, key)
        except UnsupportedSchema as exc:
            self._cache[key] = exc
            raise
        seconds = time.perf_counter() - start
        self._cache[key] = constraint
        return constraint, seconds

    def unsupported(self, reason: str) -> UnsupportedSchema:
        """The error that refuses a schema this engine cannot compile.

        Args:
            reason: why, one clause.
        Returns:
            UnsupportedSchema naming the engine and the reason, for `_compile` to raise.
        """
        return UnsupportedSchema(f"engine {self.name} cannot compile the schema: {reason}")


# Every module of vbw.generate.engines registers its engine when imported, and the
# registry imports them all on its first unknown name or listing: a new engine is its
# module, its conf/engine file and its tests (an installed package names its Engine
# subclass in an entry point of group `vbw.engines` instead).
ENGINES: Registry[Engine] = Registry("engine", tag="name", group="vbw.engines",
                                   package="vbw.generate.engines")
