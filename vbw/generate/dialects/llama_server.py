"""`llama_server`: llama.cpp's llama-server."""

from __future__ import annotations

from typing import Any, ClassVar

from vbw.generate.backend import Tool
from vbw.generate.dialects.base import DIALECTS, Dialect, Fields, Schema


@DIALECTS.register
class LlamaServer(Dialect):
    """llama.cpp's llama-server. Greedy: its `/completion` option `repeat_penalty`
    (default 1.0, accepted on /v1/chat/completions) is pinned. Interventions: its
    `logprobs`/`top_logprobs` (`n_probs`) come from the raw logits unless
    `post_sampling_probs` is set, so before the grammar (not tested here: no llama-server
    binary in the test environment)."""

    name: ClassVar[str] = "llama_server"
    greedy: ClassVar[dict[str, Any]] = {"repeat_penalty": 1.0}
    truncations: ClassVar[frozenset[str]] = frozenset({"top_k", "min_p"})
    logprobs_before_constraint: ClassVar[bool] = True

    def schema_fields(self, schema: Schema) -> Fields:
        """The native top-level `json_schema` field.
        https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md
        (`POST /completion` option `json_schema`; `/v1/chat/completions` also accepts the
        `/completion` options, and its OpenAI-compat parser reads `json_schema` before
        `response_format`). The README's response_format forms reach the same grammar; the
        native field is the one every llama-server with JSON-schema support understands."""
        return {"json_schema": dict(schema)}

    def tool_fields(self, tool: Tool, schema: Schema) -> Fields:
        """Tools on a server started with `--jinja`; its parser (common/chat.cpp,
        common_chat_tool_choice_parse_oaicompat) accepts only the strings `auto`, `none`
        and `required` as `tool_choice`, not OpenAI's named object: with the one function
        offered, `required` forces it, and the tool-call grammar binds its parameters.
        https://github.com/ggml-org/llama.cpp/blob/master/docs/function-calling.md"""
        return {**super().tool_fields(tool, schema), "tool_choice": "required",
                "parallel_tool_calls": False}
