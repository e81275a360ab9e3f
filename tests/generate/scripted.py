"""A scripted fake backend, for testing generation logic without a model.

It answers from a function of (messages, config), records every call in order, can refuse
chosen schemas as unsupported, charge a compile time, or fail the Nth request, so tests can
pin down the arm order, compile-time attribution, unsupported-schema recording, resume and
a whole `app.run` in milliseconds. The real-model tests stay; this is in addition.

vbw never imports it: importing this module plugs the backend kind `scripted` into
vbw.config.BACKENDS, as an installed package's entry point would, and a test selects an
instance it holds with `backend=scripted(ScriptedBackend(...))` in the run config.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from vbw.config import BACKENDS, BackendSettings, EngineConfig, ModelConfig
from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.canary import CANARY_EXPECTED, CANARY_SCHEMA
from vbw.generate.model import ModelFile
from vbw.generate.providers import Opened, Provider
from vbw.replay import ModelInfo

Script = Callable[[Sequence[Message], GenerateConfig], str]
# The model a scripted run's header names: no weights, so nothing real to hash.
SCRIPTED_MODEL = ModelFile(path="-", sha256="0" * 64, source="path", file="scripted")


def echo_script(messages: Sequence[Message], config: GenerateConfig) -> str:
    """A deterministic answer: JSON of the schema's first property when constrained (the
    canary's own value for the canary), else a line naming the last message's length."""
    if config.schema_ == CANARY_SCHEMA:
        return json.dumps(CANARY_EXPECTED)
    if config.schema_ is not None:
        first = next(iter(config.schema_.get("properties", {"x": None})))
        return json.dumps({first: len(messages)})
    return f"Answer: {len(messages[-1]['content'])}"


class ScriptedBackend(Backend):
    def __init__(self, script: Script = echo_script, *, engine: str = "scripted",
                 unsupported: Sequence[Mapping[str, Any]] = (), compile_seconds: float = 0.0,
                 fail_on_call: int | None = None) -> None:
        self.script = script
        self.engine = engine
        self.unsupported = [json.dumps(s) for s in unsupported]
        self.compile_seconds = compile_seconds
        self.fail_on_call = fail_on_call
        self.calls: list[tuple[list[dict[str, str]], GenerateConfig]] = []
        self.compiled: list[str] = []
        self._lock = threading.Lock()

    def compile(self, schema: Mapping[str, Any]) -> float:
        key = json.dumps(schema)
        if key in self.unsupported:
            raise UnsupportedSchema("engine scripted cannot compile the schema: refused")
        if key in self.compiled:
            return 0.0
        self.compiled.append(key)
        return self.compile_seconds

    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        with self._lock:
            self.calls.append(([dict(m) for m in messages], config))
            n = len(self.calls)
        if self.fail_on_call is not None and n == self.fail_on_call:
            raise EngineError(f"scripted failure on request {n}")
        text = self.script(messages, config)
        return Generation(text=text, n_tokens=len(text.split()), seconds=0.001,
                          ttft_seconds=0.0005, finish_reason="stop")


_HELD: dict[str, ScriptedBackend] = {}  # ref -> the instance a test handed over
_REFS = itertools.count()


@BACKENDS.plug
class ScriptedConfig(BackendSettings):
    """The `scripted` backend kind: `ref` names an instance made by the test."""

    provider: ClassVar[str] = "tests.generate.scripted:ScriptedProvider"
    name: Literal["scripted"]
    ref: str


class ScriptedProvider(Provider):
    """No model to check or load: the header names the run's model config with a
    weightless file, and the engine the instance says."""

    def prepare(self, backend: ScriptedConfig, model: ModelConfig) -> ModelFile | None:
        return SCRIPTED_MODEL

    def planned(self, backend: ScriptedConfig, model: ModelConfig, engine: EngineConfig,
                mf: ModelFile | None) -> dict[str, Any]:
        return {"engine": _HELD[backend.ref].engine,
                "model": ModelInfo(name=model.name, file=SCRIPTED_MODEL.file,
                                   sha256=SCRIPTED_MODEL.sha256, source="scripted"),
                "decoding": {"strategy": "greedy", "n_ctx": engine.n_ctx},
                "kv_reuse": engine.kv_reuse, "whitespace": engine.whitespace}

    def open(self, backend: ScriptedConfig, model: ModelConfig, engine: EngineConfig,
             mf: ModelFile | None, threads: int | None) -> Opened:
        return Opened(_HELD[backend.ref], 0.0)


def scripted(backend: ScriptedBackend) -> dict[str, str]:
    """The run config's `backend` that selects `backend` (kept for the test's asserts)."""
    ref = f"scripted-{next(_REFS)}"
    _HELD[ref] = backend
    return {"name": "scripted", "ref": ref}
