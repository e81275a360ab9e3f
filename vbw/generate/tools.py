"""How each OpenAI-compatible server wants one forced function call, and how its reply is read.

A tool_call[S] arm offers S as the parameters of one function and forces that function,
the way production code asks a model for an object through native tool calling rather
than `response_format`. Each dialect's request form is the one its server documents
(references beside each function). The arm's text is the call's `arguments` string as
the server returns it; a reply with no tool call, or whose first call names another
function, gives no text (scored invalid), never the message content in its place.

Function names: OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$` and refuses BFCL's
`math.factorial`. BFCL maps such names by replacing '.' with '_' before sending them
(gorilla, berkeley-function-call-leaderboard/bfcl_eval/model_handler/utils.py,
convert_to_tool: "OAI does not support '.' in the function name"), and vbw does the same,
for every dialect (all speak OpenAI's API, and one mapping keeps runs on different
servers comparable); the replay records the name as sent beside the task's. A name that
still does not fit is recorded as unsupported for the item, like a schema an engine
cannot compile.

Tool requests are never streamed: servers stream a call as argument fragments in
`delta.tool_calls`, and one JSON reply is the form every dialect documents alike (so a
tool_call arm has no ttft_seconds).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from vbw.errors import UnsupportedSchema
from vbw.generate.backend import Generation, Tool
from vbw.redact import Secret, mask_exact

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

Schema = Mapping[str, Any]
Fields = dict[str, Any]


def wire_name(name: str) -> str:
    """`name` as every dialect accepts it: '.' -> '_' (BFCL's mapping); UnsupportedSchema
    for a name that still breaks OpenAI's rule."""
    mapped = name.replace(".", "_")
    if not OPENAI_NAME.match(mapped):
        raise UnsupportedSchema(f"function name {name!r} cannot be sent: OpenAI-compatible "
                                f"servers accept only names matching {OPENAI_NAME.pattern} "
                                "(after '.' -> '_', as BFCL maps them)")
    return mapped


def _function(tool: Tool, schema: Schema, strict: bool = False) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": tool.name, "description": tool.description,
                          "parameters": dict(schema)}
    if strict:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def _named(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name}}


def openai_tool(tool: Tool, schema: Schema) -> Fields:
    """OpenAI function calling with Structured Outputs.
    https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
    https://platform.openai.com/docs/guides/function-calling (strict mode, tool_choice)
    `strict: true` binds the arguments to the schema (OpenAI's subset); a named
    `tool_choice` forces the function; the guide says strict schemas are not guaranteed
    for parallel calls, so `parallel_tool_calls: false`."""
    return {"tools": [_function(tool, schema, strict=True)], "tool_choice": _named(tool),
            "parallel_tool_calls": False}


def vllm_tool(tool: Tool, schema: Schema) -> Fields:
    """vLLM named function calling.
    https://docs.vllm.ai/en/latest/features/tool_calling/ ("named function calling")
    A named `tool_choice` makes vLLM decode the arguments under its structured-output
    backend, with the function's parameters as the schema (the page's "Named Function
    Calling" section); `strict` is OpenAI's switch for that and is not sent."""
    return {"tools": [_function(tool, schema)], "tool_choice": _named(tool)}


def llama_server_tool(tool: Tool, schema: Schema) -> Fields:
    """llama.cpp's llama-server, started with `--jinja`.
    https://github.com/ggml-org/llama.cpp/blob/master/docs/function-calling.md
    https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (`tools`,
    `tool_choice`, `parallel_tool_calls`; "requires --jinja")
    Its parser (common/chat.cpp, common_chat_tool_choice_parse_oaicompat) accepts only the
    strings `auto`, `none` and `required`, not OpenAI's named object; with the one function
    offered, `required` forces that function, and the tool-call grammar binds its
    parameters."""
    return {"tools": [_function(tool, schema)], "tool_choice": "required",
            "parallel_tool_calls": False}


def llama_cpp_python_tool(tool: Tool, schema: Schema) -> Fields:
    """llama-cpp-python's server with `--chat_format chatml-function-calling`.
    https://github.com/abetlen/llama-cpp-python#function-calling (README, "Function Calling")
    https://llama-cpp-python.readthedocs.io/en/latest/server/#function-calling
    A named `tool_choice` ("Case 2" of llama_chat_format.chatml_function_calling) writes
    `functions.<name>:` after the prompt and decodes the arguments under a grammar built
    from the parameters (falling back, silently, to any JSON when the schema does not
    convert: the canary's tool check catches that for its schema)."""
    return {"tools": [_function(tool, schema)], "tool_choice": _named(tool)}


def ollama_tool(tool: Tool, schema: Schema) -> Fields:
    """Ollama, through its OpenAI-compatible `/v1/chat/completions`.
    https://docs.ollama.com/api/openai-compatibility (supported request fields: `tools`)
    https://docs.ollama.com/capabilities/tool-calling
    Sent in OpenAI's form. Ollama's /v1 endpoint reads `tools` but drops `tool_choice`:
    a forced call comes back as plain text (ollama/ollama#8421, and #17921 on 0.32.15),
    so the canary's tool check is expected to refuse the run before any item."""
    return {"tools": [_function(tool, schema)], "tool_choice": _named(tool)}


TOOL_FIELDS: dict[str, Callable[[Tool, Schema], Fields]] = {
    "openai": openai_tool,
    "vllm": vllm_tool,
    "llama_server": llama_server_tool,
    "llama_cpp_python": llama_cpp_python_tool,
    "ollama": ollama_tool,
}


def tool_fields(dialect: str, tool: Tool, schema: Schema) -> Fields:
    """The body fields that offer and force `tool` with `schema` as its parameters."""
    return TOOL_FIELDS[dialect](tool, schema)


def _call_name(call: Any) -> str | None:
    fn = call.get("function") if isinstance(call, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    return name if isinstance(name, str) else None


def read_call(message: Mapping[str, Any], sent: str) -> tuple[str, list[str]]:
    """(arguments text, names called) from an assistant message. The text is the first
    call's `arguments` when that call names `sent`, else "" (no call, or another
    function: the arm has no output). Arguments sent as an object rather than the
    documented JSON string are serialised compactly."""
    calls = message.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    names = [n if (n := _call_name(c)) is not None else "" for c in calls]
    if not calls or names[0] != sent:
        return "", names
    args = calls[0]["function"].get("arguments")
    if isinstance(args, str):
        return args, names
    return json.dumps(args, ensure_ascii=False, separators=(",", ":")), names


def as_called(gen: Generation, sent: str, secrets: tuple[Secret, ...]) -> Generation:
    """A tool reply as the arm records it: the call's arguments as the text, the names
    called, and the message, each with a credential's value masked (vbw.generate.server)."""
    text, called = read_call(gen.message or {}, sent)
    text, masked = mask_exact(text, secrets)
    message = gen.message
    if message is not None:
        raw, hidden = mask_exact(json.dumps(message, ensure_ascii=False), secrets)
        if hidden:  # else the message is as it was: no second copy of a large reply
            message, masked = json.loads(raw), True
    return gen.model_copy(update={"text": text, "called": called, "message": message,
                                  "redacted": gen.redacted or masked})
