"""The canary: proof, before a run, that an engine's constraint actually binds.

A constraint that silently does nothing (wrong vocabulary, swallowed processor error,
grammar not attached) would make every "constrained" arm an unconstrained one. The
canary asks for a haiku and lets the schema force one exact object; anything else
means the engine is not constraining, and the run refuses to start.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from vbw.errors import EngineError, UnsupportedSchema

if TYPE_CHECKING:
    from vbw.generate.backend import Backend

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


def run_canary(backend: Backend) -> float:
    """Run the canary through `backend` (its engine, or a server's dialect); returns its
    wall seconds or raises EngineError: a run whose constraint does not bind refuses."""
    from vbw.generate.backend import GenerateConfig

    start = time.perf_counter()
    config = GenerateConfig(max_tokens=CANARY_MAX_TOKENS, schema=CANARY_SCHEMA)
    try:
        gen = backend.generate([{"role": "user", "content": CANARY_PROMPT}], config)
    except UnsupportedSchema as exc:
        raise EngineError(f"canary failed on engine {backend.engine}: {exc}") from None
    seconds = time.perf_counter() - start
    try:
        parsed = json.loads(gen.text)
    except ValueError:
        parsed = None
    if parsed != CANARY_EXPECTED:
        shown = json.dumps(gen.text[:120], ensure_ascii=False)
        raise EngineError(
            f"canary failed on engine {backend.engine}: got {shown}, "
            f"expected {json.dumps(CANARY_EXPECTED)}; its constraint is not binding"
        )
    return seconds
