"""`ollama`: Ollama, through its OpenAI-compatible `/v1/chat/completions`."""

from __future__ import annotations

from typing import ClassVar

from vbw.generate.dialects.base import DIALECTS, Dialect


@DIALECTS.register
class Ollama(Dialect):
    """Ollama's `/v1` endpoint: the OpenAI-compatible form throughout.

    Schema: Ollama's own field is `format`, but only on its native `/api/chat`; the `/v1`
    request struct (ollama/ollama, openai/openai.go, ChatCompletionRequest) has no
    `format`, so one sent there is dropped silently. That endpoint reads `response_format`
    and passes `json_schema.schema` on as `format` (FromChatRequest), so the OpenAI
    json_schema form is sent (https://docs.ollama.com/api/openai-compatibility).
    Tools: `/v1` reads `tools` but drops `tool_choice`, so a forced call comes back as
    plain text (ollama/ollama#8421, #17921) and the canary's tool check is expected to
    refuse the run before any item. Greedy: `/v1` has no field for its repeat penalty.
    Interventions: which distribution its log-probabilities come from is undocumented."""

    name: ClassVar[str] = "ollama"
