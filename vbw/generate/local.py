"""The in-process backend: one llama.cpp `Runtime`, constrained by one `Engine`.

Every arm goes through the same runtime (same weights, prompt tokens and sampler chain),
so a difference between arms comes from the constraint alone. The engine compiles each
schema once; this backend renders the chat with the GGUF's own template and decodes.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from vbw.config import DecodingConfig, EngineConfig, LocalBackendConfig, ModelConfig
from vbw.errors import ConfigError
from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.engines import Engine
from vbw.generate.model import ModelFile, resolve_model
from vbw.generate.providers import ONE_AT_A_TIME, Batching, Opened, Provider
from vbw.generate.repack import crash_flag
from vbw.generate.repack import resolve as resolve_repack
from vbw.generate.runtime import DEFAULT_SEED, SAMPLING, Runtime, import_llama_cpp
from vbw.generate.sampling import CHAIN
from vbw.replay import ModelInfo


class LocalBackend(Backend):
    """Generations through one Runtime. With batch.sequences > 1 several threads call
    `generate` at once: the engine's compiles and the chat rendering take turns (a lock),
    the decoding is shared in one batch (vbw.generate.batched)."""

    def __init__(self, runtime: Runtime, engine: Engine) -> None:
        self.runtime = runtime
        self.engine_impl = engine
        self.engine = engine.name
        self.requires = engine.requires  # llama-cpp-python: the kind's (LocalBackendConfig)
        self.sequences = runtime.sequences
        self._lock = threading.Lock()

    def compile(self, schema: Mapping[str, Any]) -> float:
        with self._lock:
            return self.engine_impl.compile(schema)[1]

    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        return self.generate_many([(messages, config)])[0]

    def generate_many(self, requests: Sequence[tuple[Sequence[Message], GenerateConfig]]
                      ) -> list[Generation]:
        prepared = []
        with self._lock:
            for messages, config in requests:
                rule, seconds = None, 0.0
                if config.schema_ is not None:
                    constraint, seconds = self.engine_impl.compile(config.schema_)
                    rule = constraint.rule()
                prepared.append((self.runtime.chat_tokens(messages), rule, seconds, config))
        done = self.runtime.complete_many([(tokens, config.max_tokens, rule,
                                            self.engine_impl.greedy_first, config.sampling)
                                           for tokens, rule, _, config in prepared])
        return [gen.model_copy(update={"compile_seconds": seconds})
                for gen, (_, _, seconds, _) in zip(done, prepared)]

    def clear_cache(self) -> None:
        self.runtime.clear_kv()

    def close(self) -> None:
        self.runtime.close()


def _source(model: ModelConfig, mf: ModelFile) -> str:
    if mf.source == "hub":
        return f"{model.repo}@{model.revision}/{model.file}"
    if mf.source == "package":
        return f"pip:{model.package}/{mf.file}"
    return f"path:{mf.path}"


class LocalProvider(Provider):
    """The `local` backend kind: the live extra and the hashed model file are checked
    first; opening loads the GGUF and builds the `engine` group's engine on it."""

    native = True

    def crash_cause(self, model: ModelConfig, signal_number: int) -> str:
        repacked = resolve_repack(model.repack)
        flag = crash_flag()
        setting = f"model.repack={model.repack} ({'on' if repacked else 'off'})"
        if signal_number in (signal.SIGSEGV, signal.SIGBUS) and repacked and flag:
            return (f"llama.cpp's weight repacking on a CPU with {flag} (upstream "
                    f"llama.cpp#20824; {setting}): run with model.repack=off")
        if signal_number == signal.SIGILL:
            return ("an instruction this CPU lacks: llama-cpp-python was built for another "
                    "CPU; rebuild it here: CMAKE_ARGS=-DGGML_NATIVE=OFF pip install "
                    "--force-reinstall --no-cache-dir llama-cpp-python")
        if signal_number == signal.SIGABRT:
            return f"llama.cpp or the engine stopped on a failed check ({setting})"
        return f"a fault in llama.cpp or the engine's native code ({setting})"

    def prepare(self, backend: LocalBackendConfig, model: ModelConfig) -> ModelFile | None:
        import_llama_cpp()  # the run loads it next anyway
        return resolve_model(model)

    def planned(self, backend: LocalBackendConfig, model: ModelConfig, engine: EngineConfig,
                mf: ModelFile | None) -> dict[str, Any]:
        from vbw.generate.engines import ENGINES

        if engine.name not in ENGINES:  # refused before the model loads
            raise ConfigError(f"engine.name: unknown engine {engine.name!r}; valid engines: "
                              f"{', '.join(ENGINES.kinds)}")
        assert mf is not None
        return {"engine": engine.name,
                "model": ModelInfo(name=model.name, file=mf.file, sha256=mf.sha256,
                                   source=_source(model, mf)),
                "decoding": {"strategy": "greedy", "seed": DEFAULT_SEED, **SAMPLING,
                             "n_ctx": engine.n_ctx},
                "kv_reuse": engine.kv_reuse, "whitespace": engine.whitespace,
                "repack": resolve_repack(model.repack)}

    def sampling(self, backend: LocalBackendConfig, decoding: DecodingConfig) -> dict[str, Any]:
        """Every setting is honoured in process (vbw.generate.sampling's chain)."""
        return {"strategy": "sample", "temp": decoding.temperature, "top_k": decoding.top_k,
                "top_p": decoding.top_p, "min_p": decoding.min_p, "chain": CHAIN}

    def open(self, backend: LocalBackendConfig, model: ModelConfig, engine: EngineConfig,
             mf: ModelFile | None, threads: int | None,
             batching: Batching = ONE_AT_A_TIME) -> Opened:
        from vbw.generate.engines import make_engine
        from vbw.generate.provenance import hardware

        assert mf is not None
        start = time.perf_counter()
        runtime = Runtime(mf.path, n_ctx=engine.n_ctx, n_threads=threads, seed=DEFAULT_SEED,
                          reuse_kv=engine.kv_reuse, gpu_layers=model.gpu_layers,
                          repack=resolve_repack(model.repack),
                          sequences=batching.sequences, flash_attn=batching.flash_attn)
        runtime.record_tax = engine.tax
        load = round(time.perf_counter() - start, 3)
        hw = {**hardware(runtime.n_threads), "gpu_layers": model.gpu_layers}
        return Opened(LocalBackend(runtime, make_engine(engine.name, runtime,
                                                        engine.greedy_first,
                                                        engine.whitespace)), load, hw)
