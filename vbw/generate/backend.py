"""Where completions come from: one interface for every backend.

How it works and why: docs/design.md, section vbw.generate.backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vbw.replay.format import Intervention

Message = Mapping[str, str]


class Generation(BaseModel):
    """One completion plus the timings the report needs (ttft includes prompt eval)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    n_tokens: int | None = Field(ge=0)  # generated tokens, excluding the end of generation;
    # None: unknown (a server that reported no valid count)
    seconds: float
    ttft_seconds: float | None
    finish_reason: Literal["stop", "length"]
    compile_seconds: float = 0.0
    redacted: bool = False  # a credential's value in the text was replaced by ***
    # tool_call arms only: the names of the functions the reply called, in order ([]: no
    # tool call; then `text` is empty and nothing else stands in for it), and the
    # assistant message as the server returned it (content and tool_calls)
    called: list[str] | None = None
    message: dict[str, Any] | None = None
    # where the constraint refused the model's argmax (vbw.generate.interventions); None:
    # no grammar, or a backend that cannot tell
    interventions: list[Intervention] | None = None
    # the grammar's tax in nats (vbw.generate.sampling.tax_step summed); None: no grammar,
    # or a backend that cannot tell
    tax: float | None = None


class Sampling(BaseModel):
    """One request's sampler: temperature > 0 after the truncations (0, 1.0, 0.0: off),
    and the seed of this very sample (vbw.generate.sampling.sample_seed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(gt=0.0)
    top_k: int = Field(default=0, ge=0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    min_p: float = Field(default=0.0, ge=0.0, lt=1.0)
    seed: int = Field(ge=0, lt=2**31)


class Tool(BaseModel):
    """The one function a tool_call arm offers and forces; `name` as sent (already mapped
    to what the dialects accept, vbw.generate.tools.wire_name)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str


class GenerateConfig(BaseModel):
    """What one request needs: the token cap, and the schema when the arm enforces one;
    with `tool`, the schema goes out as that function's parameters, the function forced,
    and the text is the call's arguments; `sampling`, when the run samples."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    max_tokens: int = Field(ge=1)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    tool: Tool | None = None
    sampling: Sampling | None = None  # None: greedy


class Backend(ABC):
    """A model somewhere, decoded greedily; see the module docstring."""

    engine: str  # the engine name the replay header records ("outlines", "server-vllm")
    # False: no schema can be enforced. A live run then refuses constrained and
    # reason_then_constrain arms in one line (exit 2) and skips the canary, which such a
    # backend cannot pass; compile() and a generate() with a schema raise UnsupportedSchema.
    can_constrain: bool = True
    # distributions this backend runs on beyond its kind's (BackendSettings.requires), e.g.
    # the in-process backend's engine's: both join the replay header's versions
    requires: tuple[str, ...] = ()
    # completions it decodes at once in this process (batch.sequences): a live run keeps
    # that many items in flight, each calling `generate` from a thread of its own
    sequences: int = 1

    @abstractmethod
    def compile(self, schema: Mapping[str, Any]) -> float:
        """Prepare `schema` for constrained decoding. Raises UnsupportedSchema when the
        engine cannot enforce it.

        Args:
            schema: the JSON Schema the arm enforces.
        Returns:
            Seconds spent now (0 when cached).
        """

    @abstractmethod
    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        """Chat-complete `messages` under `config`; raises EngineError on a failure that
        must not be recorded as an output (UnsupportedSchema for a schema it cannot enforce).

        Args:
            messages: the chat messages (role, content).
            config: the token cap, and the schema or tool when the arm enforces one.
        Returns:
            The completion and its timings.
        """

    def generate_many(self, requests: Sequence[tuple[Sequence[Message], GenerateConfig]]
                      ) -> list[Generation]:
        """Several independent completions; a backend that decodes several at once
        (`sequences` > 1) starts them together, in this order. The default: one by one.

        Args:
            requests: (messages, config) pairs, as `generate` takes them.
        Returns:
            Their generations, in the same order; the first failure (in that order) is
            raised once every request has ended.
        """
        return [self.generate(messages, config) for messages, config in requests]

    def clear_cache(self) -> None:
        """Forget cached prompt state (after the canary); a no-op where there is none."""

    def describe(self) -> dict[str, Any]:
        """What the replay header records about this backend beyond the model file: e.g.
        a server's base URL, served model id, dialect and software. Never a credential.

        Returns:
            Header fields (empty by default).
        """
        return {}

    def close(self) -> None:
        """Release connections or threads; the backend is not used afterwards."""
