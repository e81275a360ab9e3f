"""The `openai` backend kind's provider: an OpenAI-compatible server (vbw.generate.server).

What a server run checks before starting (the API key variable), what its replay header
records (the served model, the public base URL, the dialect as the engine, what is
masked) and how it connects.
"""

from __future__ import annotations

import os
import time
from typing import Any

from vbw.config import DecodingConfig, EngineConfig, ModelConfig, OpenAIBackendConfig
from vbw.errors import ConfigError
from vbw.generate.dialects import dialect_for
from vbw.generate.model import ModelFile
from vbw.generate.providers import Opened, Provider
from vbw.generate.runtime import DEFAULT_SEED
from vbw.replay import ModelInfo


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
        what.append("the base URL's userinfo, password and secret query values")
    return (f"{' and '.join(what)}, in any form, wherever a server's reply contains them"
            if what else None)


class OpenAIProvider(Provider):
    def prepare(self, backend: OpenAIBackendConfig, model: ModelConfig) -> ModelFile | None:
        from vbw.generate.server.client import api_key

        api_key(backend, os.environ)  # checked now, read again when the backend opens
        return None

    def planned(self, backend: OpenAIBackendConfig, model: ModelConfig,
                engine: EngineConfig, mf: ModelFile | None) -> dict[str, Any]:
        return {"engine": backend.engine,
                "model": ModelInfo(name=backend.model, source=public_url(backend.base_url)),
                "decoding": {"strategy": "greedy", "temperature": 0, "seed": DEFAULT_SEED,
                             **dialect_for(backend.dialect).greedy_extras(), "stream": backend.stream},
                "backend": {"name": backend.name, "base_url": public_url(backend.base_url),
                            "model": backend.model, "dialect": backend.dialect,
                            "masked": _masked(backend)}}

    def sampling(self, backend: OpenAIBackendConfig, decoding: DecodingConfig) -> dict[str, Any]:
        """temperature, top_p and seed go to every server; top_k and min_p only where the
        dialect takes them (Dialect.truncations), else the run is refused here."""
        dialect = dialect_for(backend.dialect)
        on = {k: v for k, v in decoding.truncations().items() if k != "top_p"}
        refused = sorted(set(on) - dialect.truncations)
        if refused:
            takes = ", ".join(sorted(dialect.truncations)) or "none of them"
            raise ConfigError(f"decoding.{refused[0]}={on[refused[0]]}: the "
                              f"{backend.dialect} dialect cannot send it (it takes top_p "
                              f"and, of top_k and min_p, {takes}); leave it at its default")
        return {"strategy": "sample", "temperature": decoding.temperature,
                "top_p": decoding.top_p,
                **{k: getattr(decoding, k) for k in sorted(dialect.truncations)}}

    def open(self, backend: OpenAIBackendConfig, model: ModelConfig, engine: EngineConfig,
             mf: ModelFile | None, threads: int | None) -> Opened:
        from vbw.generate.server.client import OpenAIServerBackend

        start = time.perf_counter()
        server = OpenAIServerBackend(backend, seed=DEFAULT_SEED)
        return Opened(server, round(time.perf_counter() - start, 3))
