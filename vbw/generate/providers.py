"""One factory per backend: what it needs before a run may start, what the replay header
records about it, and how it is opened. The optional imports (llama-cpp-python, the
server client) and their install hints live here, in one place.

`prepare` is cheap and runs before anything is announced (a missing extra or model is one
line); `planned` gives the header fields that decide resumption, known before loading;
`open_backend` loads the model or connects, and is paid for once per run.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from vbw.config import BackendConfig, EngineConfig, ModelConfig, OpenAIBackendConfig
from vbw.generate.backend import Backend
from vbw.generate.dialects import GREEDY_EXTRAS
from vbw.generate.model import ModelFile, resolve_model
from vbw.generate.runtime import DEFAULT_SEED, SAMPLING, import_llama_cpp
from vbw.replay import ModelInfo

@dataclass
class Opened:
    backend: Backend
    load_seconds: float
    hardware: dict[str, Any] = field(default_factory=dict)


def prepare(backend: BackendConfig, model: ModelConfig) -> ModelFile | None:
    """Everything a run needs before it may start, checked without loading: the live
    extra and the hashed model file (local), the API key variable (server)."""
    if isinstance(backend, OpenAIBackendConfig):
        from vbw.generate.server import api_key

        api_key(backend, os.environ)  # checked now, read again when the backend opens
        return None
    import_llama_cpp()  # the run loads it next anyway
    return resolve_model(model)


def public_url(url: str) -> str:
    """A base URL as it may be recorded: no credentials (see vbw.generate.wire)."""
    from vbw.generate.wire import parse_base_url

    return parse_base_url(url).shown()


def _masked(backend: OpenAIBackendConfig) -> str | None:
    """What the server backend masks in model text (vbw.generate.server), for the header;
    None when it holds no credential to mask."""
    from vbw.generate.wire import parse_base_url

    what = [f"the API key (${backend.api_key_env})"] if backend.api_key_env else []
    if parse_base_url(backend.base_url).text_secrets:
        what.append("the base URL's password and key-like query values")
    return f"{' and '.join(what)}, wherever a generated text contains them" if what else None


def _source(model: ModelConfig, mf: ModelFile) -> str:
    if mf.source == "hub":
        return f"{model.repo}@{model.revision}/{model.file}"
    if mf.source == "package":
        return f"pip:{model.package}/{mf.file}"
    return f"path:{mf.path}"


def planned(backend: BackendConfig, model: ModelConfig, engine: EngineConfig,
            mf: ModelFile | None) -> dict[str, Any]:
    """Header fields fixed by the configuration: engine, model, decoding, reuse, server."""
    if isinstance(backend, OpenAIBackendConfig):
        return {"engine": backend.engine,
                "model": ModelInfo(name=backend.model, source=public_url(backend.base_url)),
                "decoding": {"strategy": "greedy", "temperature": 0, "seed": DEFAULT_SEED,
                             **GREEDY_EXTRAS[backend.dialect], "stream": backend.stream},
                "backend": {"name": "openai", "base_url": public_url(backend.base_url),
                            "model": backend.model, "dialect": backend.dialect,
                            "masked": _masked(backend)}}
    assert mf is not None
    return {"engine": engine.name,
            "model": ModelInfo(name=model.name, file=mf.file, sha256=mf.sha256,
                               source=_source(model, mf)),
            "decoding": {"strategy": "greedy", "seed": DEFAULT_SEED, **SAMPLING,
                         "n_ctx": engine.n_ctx},
            "kv_reuse": engine.kv_reuse, "whitespace": engine.whitespace}


def open_backend(backend: BackendConfig, model: ModelConfig, engine: EngineConfig,
                 mf: ModelFile | None, threads: int | None) -> Opened:
    """Load the model (local) or connect (server)."""
    start = time.perf_counter()
    if isinstance(backend, OpenAIBackendConfig):
        from vbw.generate.server import OpenAIServerBackend

        server = OpenAIServerBackend(backend, seed=DEFAULT_SEED)
        return Opened(server, round(time.perf_counter() - start, 3))
    from vbw.generate.engines import make_engine
    from vbw.generate.local import LocalBackend
    from vbw.generate.provenance import hardware
    from vbw.generate.runtime import Runtime

    assert mf is not None
    runtime = Runtime(mf.path, n_ctx=engine.n_ctx, n_threads=threads, seed=DEFAULT_SEED,
                      reuse_kv=engine.kv_reuse, gpu_layers=model.gpu_layers)
    load = round(time.perf_counter() - start, 3)
    hw = {**hardware(runtime.n_threads), "gpu_layers": model.gpu_layers}
    return Opened(LocalBackend(runtime, make_engine(engine.name, runtime, engine.greedy_first,
                                                    engine.whitespace)),
                  load, hw)
