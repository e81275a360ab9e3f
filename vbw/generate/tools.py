"""How a forced function call's name is sent, and how its reply is read.

A tool_call[S] arm offers S as the parameters of one function and forces that function,
the way production code asks a model for an object through native tool calling rather
than `response_format`. Each dialect's request form is the one its server documents
(`tool_fields` of vbw.generate.dialects). The arm's text is the call's `arguments` string as
the server returns it; a reply with no tool call, or whose first call names another
function, gives no text (scored invalid), never the message content in its place.

How it works and why: docs/design.md, section vbw.generate.tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from vbw.errors import UnsupportedSchema
from vbw.generate.backend import Generation

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def wire_name(name: str) -> str:
    """`name` as every dialect accepts it: '.' -> '_' (BFCL's mapping); UnsupportedSchema
    for a name that still breaks OpenAI's rule."""
    mapped = name.replace(".", "_")
    if not OPENAI_NAME.match(mapped):
        raise UnsupportedSchema(f"function name {name!r} cannot be sent: OpenAI-compatible "
                                f"servers accept only names matching {OPENAI_NAME.pattern} "
                                "(after '.' -> '_', as BFCL maps them)")
    return mapped


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


def as_called(gen: Generation, sent: str) -> Generation:
    """A tool reply as the arm records it: the call's arguments as the text and the names
    called (the reply's credentials are already masked: vbw.generate.server)."""
    text, called = read_call(gen.message or {}, sent)
    return gen.model_copy(update={"text": text, "called": called})
