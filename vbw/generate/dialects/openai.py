"""`openai`: OpenAI's own API, with Structured Outputs and strict function calling."""

from __future__ import annotations

from typing import ClassVar

from vbw.generate.backend import Tool
from vbw.generate.dialects.base import DIALECTS, Dialect, Fields, Schema


@DIALECTS.register
class OpenAI(Dialect):
    """OpenAI's API. It rejects unknown fields, so it pins no sampler extra, and it does
    not document whether log-probabilities under Structured Outputs come before the
    constraint, so none are asked for."""

    name: ClassVar[str] = "openai"

    def schema_fields(self, schema: Schema) -> Fields:
        """OpenAI Structured Outputs: `response_format` json_schema with `strict: true`,
        which makes OpenAI enforce the schema (and reject one outside its subset with a
        400, recorded as unsupported_schema).
        https://platform.openai.com/docs/api-reference/chat/create#chat-create-response_format
        https://platform.openai.com/docs/guides/structured-outputs"""
        fields = super().schema_fields(schema)
        fields["response_format"]["json_schema"]["strict"] = True
        return fields

    def tool_fields(self, tool: Tool, schema: Schema) -> Fields:
        """Function calling with Structured Outputs: `strict: true` binds the arguments to
        the schema; the guide says strict schemas are not guaranteed for parallel calls,
        so `parallel_tool_calls: false`.
        https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
        https://platform.openai.com/docs/guides/function-calling"""
        fields = super().tool_fields(tool, schema)
        fields["tools"][0]["function"]["strict"] = True
        return {**fields, "parallel_tool_calls": False}
