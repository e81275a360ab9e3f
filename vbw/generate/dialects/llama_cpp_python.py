"""`llama_cpp_python`: llama-cpp-python's server (`python -m llama_cpp.server`)."""

from __future__ import annotations

from typing import Any, ClassVar

from vbw.generate.dialects.base import DIALECTS, Dialect, Fields, Schema


@DIALECTS.register
class LlamaCppPython(Dialect):
    """llama-cpp-python's server. Greedy: it defaults `repeat_penalty` to 1.1
    (server/types.py), pinned to 1.0. Tools (the OpenAI form, with
    `--chat_format chatml-function-calling`): a named `tool_choice` writes
    `functions.<name>:` after the prompt and decodes the arguments under a grammar from the
    parameters, falling back silently to any JSON when the schema does not convert (the
    canary's tool check catches that for its schema;
    https://github.com/abetlen/llama-cpp-python#function-calling). Interventions: its
    `logprobs`/`top_logprobs` come from the raw scores before the grammar sampler (tested
    against the real server: the same refused argmaxes as the in-process llamacpp engine).

    What its 0.3.36 server does with the other dialects' schema fields
    (tests/generate/server/test_client.py): ignores `vllm`'s and `llama_server`'s (unknown
    top-level fields); rejects `openai`'s and `ollama`'s with an HTTP 500."""

    name: ClassVar[str] = "llama_cpp_python"
    greedy: ClassVar[dict[str, Any]] = {"repeat_penalty": 1.0}
    truncations: ClassVar[frozenset[str]] = frozenset({"top_k", "min_p"})
    logprobs_before_constraint: ClassVar[bool] = True

    def schema_fields(self, schema: Schema) -> Fields:
        """"JSON Schema Mode": `response_format: {"type": "json_object", "schema": S}`; its
        request model allows only `text` and `json_object` as the type.
        https://github.com/abetlen/llama-cpp-python#json-schema-mode"""
        return {"response_format": {"type": "json_object", "schema": dict(schema)}}
