"""How each OpenAI-compatible server wants a JSON Schema in a chat-completions request.

Every server reads a different request-body field, and most silently drop a field they do
not know (pydantic and Go decoders ignore extras), so a schema sent in the wrong dialect
yields an unconstrained output with HTTP 200. That is why the dialect is the run's engine
(`server-<dialect>`) and why the canary must pass before a server run: it is the only
thing that notices a schema the server ignored.

Each function maps a schema to the body fields that carry it, exactly in the form the
server documents for `POST /v1/chat/completions` (references next to each one).
`GREEDY_EXTRAS` pins the non-OpenAI sampler knobs a server would otherwise default to a
non-neutral value, so temperature 0 is the same greedy decoding as the local runtime.

What the llama-cpp-python 0.3.36 server does with each dialect (tests/generate/test_server.py):
honours `llama_cpp_python`; silently ignores `vllm` and `llama_server` (unknown top-level
fields); rejects `openai` and `ollama` (`response_format.type` must be `text` or
`json_object` there) with an HTTP 500, which the backend retries and then reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vbw.config import DIALECTS
from vbw.errors import ConfigError

SCHEMA_NAME = "vbw_output"  # OpenAI requires a name matching ^[a-zA-Z0-9_-]{1,64}$

Schema = Mapping[str, Any]
Fields = dict[str, Any]


def openai_fields(schema: Schema) -> Fields:
    """OpenAI Structured Outputs.
    https://platform.openai.com/docs/api-reference/chat/create#chat-create-response_format
    https://platform.openai.com/docs/guides/structured-outputs
    `strict: true` makes OpenAI enforce the schema (and reject one outside its subset with
    a 400, which is recorded as unsupported_schema)."""
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": SCHEMA_NAME, "schema": dict(schema),
                                                "strict": True}}}


def vllm_fields(schema: Schema) -> Fields:
    """vLLM's structured outputs, an extra body field of its OpenAI-compatible server.
    https://docs.vllm.ai/en/latest/features/structured_outputs/
    The current name is `structured_outputs: {"json": S}`; the older `guided_json: S`
    (and the other `guided_*` fields) was deprecated and removed in vLLM v0.12.0. A vLLM
    older than the rename ignores this field, which the canary catches; use the `openai`
    dialect there (vLLM also honours `response_format` json_schema)."""
    return {"structured_outputs": {"json": dict(schema)}}


def llama_server_fields(schema: Schema) -> Fields:
    """llama.cpp's llama-server: the native top-level `json_schema` field.
    https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md
    (`POST /completion` option `json_schema`; `/v1/chat/completions` also accepts the
    `/completion`-specific options, and its OpenAI-compat parser reads `json_schema` from
    the body before `response_format`). The README's response_format forms
    (`{"type": "json_object", "schema": S}`, `{"type": "json_schema", ...}`) reach the same
    grammar; the native field is the one every llama-server version since the JSON-schema
    support understands."""
    return {"json_schema": dict(schema)}


def llama_cpp_python_fields(schema: Schema) -> Fields:
    """llama-cpp-python's server ("JSON Schema Mode").
    https://github.com/abetlen/llama-cpp-python#json-schema-mode (README, "JSON Schema Mode")
    `response_format: {"type": "json_object", "schema": S}`; its request model allows only
    `text` and `json_object` as the type."""
    return {"response_format": {"type": "json_object", "schema": dict(schema)}}


def ollama_fields(schema: Schema) -> Fields:
    """Ollama, through its OpenAI-compatible `/v1/chat/completions`.
    https://docs.ollama.com/api/openai-compatibility (supported request fields: response_format)
    https://docs.ollama.com/capabilities/structured-outputs (native `format`)
    Ollama's schema field is `format`, but only on its native `/api/chat`: the
    `/v1/chat/completions` request struct (ollama/ollama, openai/openai.go,
    ChatCompletionRequest) has no `format`, so one sent there is dropped silently. That
    endpoint reads `response_format` instead and passes `json_schema.schema` on as `format`
    (FromChatRequest), so this dialect sends the OpenAI json_schema form."""
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": SCHEMA_NAME, "schema": dict(schema)}}}


DIALECT_FIELDS: dict[str, Callable[[Schema], Fields]] = {
    "openai": openai_fields,
    "vllm": vllm_fields,
    "llama_server": llama_server_fields,
    "llama_cpp_python": llama_cpp_python_fields,
    "ollama": ollama_fields,
}

# Sampler knobs outside the OpenAI API, pinned to neutral where the server's default is not
# (or may not be) neutral; temperature 0 already selects greedy everywhere. OpenAI rejects
# unknown fields, and Ollama's /v1 endpoint has no field for its repeat penalty.
GREEDY_EXTRAS: dict[str, Fields] = {
    "openai": {},
    # vLLM extra sampling parameter (default 1.0): docs.vllm.ai, OpenAI-compatible server
    "vllm": {"repetition_penalty": 1.0},
    # llama-server /completion option (default 1.0), accepted on /v1/chat/completions
    "llama_server": {"repeat_penalty": 1.0},
    # llama-cpp-python's server defaults repeat_penalty to 1.1 (server/types.py)
    "llama_cpp_python": {"repeat_penalty": 1.0},
    "ollama": {},
}


def schema_fields(dialect: str, schema: Schema) -> Fields:
    """The body fields that carry `schema` in `dialect` (a name from DIALECTS)."""
    try:
        build = DIALECT_FIELDS[dialect]
    except KeyError:
        raise ConfigError(f"unknown dialect {dialect!r}; valid: {', '.join(DIALECTS)}") from None
    return build(schema)
