"""The `vllm_guided` server dialect: vLLM from before v0.12.0, which reads a JSON Schema
from the extra body field `guided_json` (v0.12.0 removed it for `structured_outputs`,
which vbw's own `vllm` dialect sends). Everything else, its tool form, its greedy
`repetition_penalty: 1.0` and its log-probabilities (taken after the grammar, so no
interventions), is vLLM's as vbw's `vllm` dialect has it, so the class overrides only
the schema's field.

    vbw mode=live backend=openai backend.base_url=http://127.0.0.1:8000/v1 \\
        backend.model=my-model backend.dialect=vllm_guided
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vbw.generate.dialects import Vllm


class GuidedVllm(Vllm):
    """vLLM before v0.12.0: `guided_json: S` (docs.vllm.ai, v0.11 "Structured Outputs")."""

    name: ClassVar[str] = "vllm_guided"

    def schema_fields(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        return {"guided_json": dict(schema)}
