"""The canary: proof, before a run, that an engine's constraint actually binds.

A constraint that silently does nothing (wrong vocabulary, swallowed processor error,
grammar not attached) would make every "constrained" arm an unconstrained one. The
canary asks for a haiku and lets the schema force one exact object; anything else
means the engine is not constraining, and the run refuses to start.

How it works and why: docs/design.md, section vbw.generate.canary.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from vbw.errors import EngineError, UnsupportedSchema
from vbw.task.jsontext.values import loads

if TYPE_CHECKING:
    from vbw.generate.backend import Backend, Sampling

CANARY_VALUE = "vbw-canary-7f3q"
CANARY_EXPECTED: dict[str, str] = {"canary": CANARY_VALUE}
CANARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"canary": {"type": "string", "const": CANARY_VALUE}},
    "required": ["canary"],
    "additionalProperties": False,
}
CANARY_PROMPT = "Write a haiku about autumn."
CANARY_MAX_TOKENS = 48
CANARY_TOOL = "vbw_canary"


def run_canary(backend: Backend, tools: bool = False) -> float:
    """Run the canary through `backend` (its engine, or a server's dialect), and with
    `tools` its tool-call check too; returns the wall seconds or raises EngineError: a run
    whose constraint does not bind refuses."""
    from vbw.generate.backend import GenerateConfig, Tool

    start = time.perf_counter()
    config = GenerateConfig(max_tokens=CANARY_MAX_TOKENS, schema=CANARY_SCHEMA)
    _check(backend, config, "")
    if tools:
        tool = Tool(name=CANARY_TOOL, description="Record a haiku.")
        _check(backend, config.model_copy(update={"tool": tool}), " (tool call)")
    return time.perf_counter() - start


def _check(backend: Backend, config: Any, path: str) -> None:
    try:
        gen = backend.generate([{"role": "user", "content": CANARY_PROMPT}], config)
    except UnsupportedSchema as exc:
        raise EngineError(f"canary{path} failed on engine {backend.engine}: {exc}") from None
    if config.tool is not None and (gen.called or [])[:1] != [config.tool.name]:
        got = f"a call to {json.dumps(gen.called[0])}" if gen.called else "no tool call"
        content = (gen.message or {}).get("content")
        raise EngineError(
            f"canary{path} failed on engine {backend.engine}: the server was told to call "
            f"{config.tool.name} (tool_choice) and returned {got}"
            + (f" with content {json.dumps(str(content)[:80])}" if content else "")
            + "; it does not force the tool call, so tool_call arms cannot run on it")
    try:
        parsed = loads(gen.text)
    except ValueError:
        parsed = None
    if parsed != CANARY_EXPECTED:
        shown = json.dumps(gen.text[:120], ensure_ascii=False)
        raise EngineError(
            f"canary{path} failed on engine {backend.engine}: got {shown}, "
            f"expected {json.dumps(CANARY_EXPECTED)}; its constraint is not binding"
            + (" (the tool's parameters are not bound as a grammar)" if path else "")
        )


SEED_PROMPT = "Write ten random words, one per line."
SEED_MAX_TOKENS = 24


def seed_probe(backend: Backend, sampling: Sampling) -> str:
    """Whether `backend` honours a sampled request's seed: one request sent twice with a
    seed and once with another, under the run's sampler. "ignored": the same seed gave
    other texts (the server ignores it, or is not deterministic); "honoured": the same
    seed gave the same text and another seed another; "undetermined": all three alike."""
    from vbw.generate.backend import GenerateConfig

    def text(seed: int) -> str:
        config = GenerateConfig(max_tokens=SEED_MAX_TOKENS,
                                sampling=sampling.model_copy(update={"seed": seed}))
        return backend.generate([{"role": "user", "content": SEED_PROMPT}], config).text

    first, again, other = text(1), text(1), text(2)
    if first != again:
        return "ignored"
    return "honoured" if first != other else "undetermined"
