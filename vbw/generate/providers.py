"""One provider per backend kind: what it needs before a run may start, what the replay
header records about it, and how it is opened.

How it works and why: docs/design.md, section vbw.generate.providers.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from vbw.config import BackendSettings, DecodingConfig, EngineConfig, ModelConfig
from vbw.errors import ConfigError
from vbw.generate.backend import Backend
from vbw.generate.model import ModelFile


@dataclass(frozen=True)
class Batching:
    """How a kind that runs in vbw's process decodes: `sequences` completions at once
    (batch.sequences), with llama.cpp's flash attention in the batch's context if
    `flash_attn` (batch.flash_attn); both as the replay header records them."""

    sequences: int = 1
    flash_attn: bool = False


ONE_AT_A_TIME = Batching()


@dataclass
class Opened:
    backend: Backend
    load_seconds: float
    hardware: dict[str, Any] = field(default_factory=dict)


class Provider(ABC):
    """How a backend kind starts; its methods get the kind's own config.

    `native` True: the kind runs native code inside vbw's process (a model, an engine),
    which can crash it; a live run then generates in a child process
    (vbw.generate.crashguard) and reports a crash with `crash_cause`.
    """

    native = False

    def crash_cause(self, model: ModelConfig, signal_number: int) -> str:
        """The likely cause of a native crash by `signal_number`, and the setting or step
        that avoids it, for the one line that reports it.

        Args:
            model: the run's model config.
            signal_number: the signal that ended the generating process.
        Returns:
            A clause such as "an instruction this CPU lacks: ...".
        """
        return "a fault in the backend's native code"

    def prepare(self, backend: Any, model: ModelConfig) -> ModelFile | None:
        """Check what the run needs without loading (a model file to hash, a variable to
        read); raises VbwError in one line when something is missing.

        Args:
            backend: the kind's own config (a BackendSettings subclass).
            model: the run's model config.
        Returns:
            The model file, when there is one; else None.
        """
        return None

    @abstractmethod
    def planned(self, backend: Any, model: ModelConfig, engine: EngineConfig,
                mf: ModelFile | None) -> dict[str, Any]:
        """Header fields fixed by the configuration, known before loading: they decide
        whether a replay may be resumed.

        Args:
            backend: the kind's own config.
            model: the run's model config.
            engine: the run's engine config.
            mf: what `prepare` returned.
        Returns:
            Replay header fields: engine, model, decoding, ...
        """

    def sampling(self, backend: Any, decoding: DecodingConfig) -> dict[str, Any]:
        """The replay header's decoding fields of a sampled run (decoding.temperature > 0)
        beyond the seed, in the kind's own names; a kind that cannot sample, or cannot
        honour a setting, refuses it here in one line (ConfigError) before any work.
        Greedy-only by default: a kind samples only once it says how.

        Args:
            backend: the kind's own config.
            decoding: the run's decoding settings.
        Returns:
            Fields that replace or join `planned`'s decoding fields.
        """
        raise ConfigError(f"backend {backend.name!r} decodes greedily only: "
                          f"decoding.temperature={decoding.temperature} needs a backend that "
                          "samples (backend=local, or a server: backend=openai)")

    @abstractmethod
    def open(self, backend: Any, model: ModelConfig, engine: EngineConfig,
             mf: ModelFile | None, threads: int | None,
             batching: Batching = ONE_AT_A_TIME) -> Opened:
        """Load the model, or connect; paid for once per run.

        Args:
            backend: the kind's own config.
            model: the run's model config.
            engine: the run's engine config.
            mf: what `prepare` returned.
            threads: CPU threads to use, None for the kind's default.
            batching: completions decoded at once in this process, and how; passed
                only when more than one, to a kind whose `native` is True.
        Returns:
            The open backend, the seconds loading took and hardware fields for the header.
        """


def provider(backend: BackendSettings) -> Provider:
    """The Provider `backend`'s kind names, imported now."""
    module, _, name = backend.provider.partition(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        hint = f" ({backend.install_hint})" if backend.install_hint else ""
        kind = getattr(backend, "name", type(backend).__name__)
        raise ConfigError(f"backend {kind!r}: cannot import {backend.provider}: "
                          f"{e}{hint}") from None
    return cls()


def prepare(backend: BackendSettings, model: ModelConfig) -> ModelFile | None:
    """Everything a run needs before it may start, checked without loading."""
    return provider(backend).prepare(backend, model)


def planned(backend: BackendSettings, model: ModelConfig, engine: EngineConfig,
            mf: ModelFile | None) -> dict[str, Any]:
    """Header fields fixed by the configuration."""
    return provider(backend).planned(backend, model, engine, mf)


def sampled(backend: BackendSettings, decoding: DecodingConfig) -> dict[str, Any]:
    """The kind's header fields of a sampled run (Provider.sampling)."""
    return provider(backend).sampling(backend, decoding)


def native(backend: BackendSettings) -> bool:
    """Whether the kind runs native code in vbw's process (Provider.native)."""
    return provider(backend).native


def crash_cause(backend: BackendSettings, model: ModelConfig, signal_number: int) -> str:
    """The kind's reading of a native crash (Provider.crash_cause)."""
    return provider(backend).crash_cause(model, signal_number)


def open_backend(backend: BackendSettings, model: ModelConfig, engine: EngineConfig,
                 mf: ModelFile | None, threads: int | None,
                 batching: Batching = ONE_AT_A_TIME) -> Opened:
    """Load the model (local) or connect (server), batching in process as `batching`
    says when it decodes more than one sequence at once."""
    if batching.sequences > 1:
        return provider(backend).open(backend, model, engine, mf, threads, batching)
    return provider(backend).open(backend, model, engine, mf, threads)
