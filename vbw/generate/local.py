"""The in-process backend: one llama.cpp `Runtime`, constrained by one `Engine`.

Every arm goes through the same runtime (same weights, prompt tokens and sampler chain),
so a difference between arms comes from the constraint alone. The engine compiles each
schema once; this backend renders the chat with the GGUF's own template and decodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.engines import Engine
from vbw.generate.runtime import Runtime


class LocalBackend(Backend):
    def __init__(self, runtime: Runtime, engine: Engine) -> None:
        self.runtime = runtime
        self.engine_impl = engine
        self.engine = engine.name

    def compile(self, schema: Mapping[str, Any]) -> float:
        return self.engine_impl.compile(schema)[1]

    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        rule = None
        compile_seconds = 0.0
        if config.schema_ is not None:
            constraint, compile_seconds = self.engine_impl.compile(config.schema_)
            rule = constraint.rule()
        tokens = self.runtime.chat_tokens(messages)
        gen = self.runtime.complete(tokens, max_tokens=config.max_tokens, rule=rule,
                                    greedy_first=self.engine_impl.greedy_first)
        return gen.model_copy(update={"compile_seconds": compile_seconds})

    def clear_cache(self) -> None:
        self.runtime.clear_kv()
