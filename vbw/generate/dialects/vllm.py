"""`vllm`: vLLM's OpenAI-compatible server (v0.12 and later)."""

from __future__ import annotations

from typing import Any, ClassVar

from vbw.generate.dialects.base import DIALECTS, Dialect, Fields, Schema


@DIALECTS.register
class Vllm(Dialect):
    """vLLM. Greedy: its extra sampling parameter `repetition_penalty` (default 1.0) is
    pinned. Tools: named function calling decodes the arguments under its structured-output
    backend, with the function's parameters as the schema; `strict` is OpenAI's switch for
    that and is not sent (https://docs.vllm.ai/en/latest/features/tool_calling/, "Named
    Function Calling"). No interventions: vLLM applies the grammar bitmask to the logits
    before its sampler computes even `raw_logprobs`, so the constrained choice is always
    the top token."""

    name: ClassVar[str] = "vllm"
    greedy: ClassVar[dict[str, Any]] = {"repetition_penalty": 1.0}
    truncations: ClassVar[frozenset[str]] = frozenset({"top_k", "min_p"})

    def schema_fields(self, schema: Schema) -> Fields:
        """vLLM's structured outputs, an extra body field: `structured_outputs: {"json": S}`.
        https://docs.vllm.ai/en/latest/features/structured_outputs/
        The older `guided_json: S` was deprecated and removed in vLLM v0.12.0; a vLLM from
        before the rename ignores this field, which the canary catches (use the `openai`
        dialect there: vLLM also honours `response_format` json_schema)."""
        return {"structured_outputs": {"json": dict(schema)}}
