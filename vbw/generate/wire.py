"""The HTTP wire of the server backend: base URLs without their secrets, and the two
shapes a chat-completions reply comes in (one JSON object, or a server-sent-event stream).

Kept apart from the backend so the rules that decide what gets recorded (when a stream
counts as complete, where the token count comes from, what a message may show) are small
functions with no network in them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from vbw.redact import Secret, escape_surrogates, secret_param
from vbw.task.jsontext.values import loads

MESSAGE_LIMIT = 300  # characters of a server's error message quoted in ours


@dataclass(frozen=True)
class Endpoint:
    """A base URL split into what requests use and what a replay or a message may show."""

    scheme: str
    hostport: str  # no userinfo
    path: str  # base path without a trailing slash ("/v1")
    query: str  # kept on requests (e.g. Azure's api-version), key-like parameters included
    shown_query: str  # the query without key-like parameters
    userinfo: Secret | None  # "user:password" from the URL, sent as HTTP Basic
    secrets: tuple[Secret, ...]  # every credential in the URL, to scrub from messages
    # masked in model text too: key-like query values, the password and the userinfo
    # (whose base64 is the Basic token; a short user name alone is too short to mask)
    text_secrets: tuple[Secret, ...] = ()

    def url(self, path: str) -> str:
        """The request URL of `path` under the base ("/chat/completions")."""
        return self._join(self.path + path, self.query)

    def root_url(self, path: str) -> str:
        """`path` under the server root: the base path minus a trailing /v1 ("/props")."""
        root = self.path[:-3] if self.path.endswith("/v1") else self.path
        return self._join(root + path, "")

    def shown(self, path: str = "") -> str:
        """The URL of `path` as records and messages show it: no credentials."""
        return self._join(self.path + path, self.shown_query)

    def _join(self, path: str, query: str) -> str:
        return f"{self.scheme}://{self.hostport}{path}" + (f"?{query}" if query else "")


def parse_base_url(base_url: str) -> Endpoint:
    """Split `base_url`; its userinfo and key-like query values become Secrets."""
    parts = urlsplit(base_url.strip())
    userinfo, _, hostport = parts.netloc.rpartition("@")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secrets = [Secret(v) for k, v in pairs if secret_param(k) and v]
    passwords = [Secret(p) for p in userinfo.split(":", 1)[1:] if p]
    if userinfo:
        secrets += [Secret(userinfo), *passwords]
    text_secrets = tuple(secrets)
    shown_query = urlencode([(k, v) for k, v in pairs if not secret_param(k)])
    return Endpoint(scheme=parts.scheme, hostport=hostport, path=parts.path.rstrip("/"),
                    query=parts.query, shown_query=shown_query,
                    userinfo=Secret(userinfo) if userinfo else None, secrets=tuple(secrets),
                    text_secrets=text_secrets)


def one_line_text(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` on one line, cut to `limit` characters (redact before: a cut key is not found),
    a lone surrogate (a server's "\\ud800") as its escape, so the text can be written."""
    flat = escape_surrogates(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def error_message(body: bytes) -> str:
    """The human part of an error body: OpenAI's error.message, FastAPI's detail, or the
    text; whole, not flattened, so it can be redacted before it is cut to one line."""
    text = body.decode("utf-8", errors="replace")
    try:
        obj = loads(text)
    except ValueError:
        return text if text.strip() else "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error")
        for found in (err.get("message") if isinstance(err, dict) else err,
                      obj.get("detail"), obj.get("message")):
            if found:
                return found if isinstance(found, str) else json.dumps(found)
    return text


@dataclass
class Reply:
    """What one chat-completions response said, before it becomes a Generation."""

    text: str = ""
    finish_reason: str | None = None
    completion_tokens: int | None = None  # usage.completion_tokens, when valid
    content_chunks: int = 0  # streamed chunks that carried content (0 when not streamed)
    ttft: float | None = None  # seconds from sending to the first content (streams only)
    message: dict[str, Any] | None = None  # choices[0].message of a non-streamed reply
    # choices[0].logprobs.content entries as sent (checked by vbw.generate.server.logprobs)
    logprobs: list[Any] | None = None


class Malformed(ValueError):
    """The reply is not shaped like a chat completion; the message names the field and
    what it should have been."""


class StreamCut(Exception):
    """The stream ended before the reply was complete: the connection broke off (the
    server died), or the server ended it with [DONE] but no finish_reason (`ended`)."""

    def __init__(self, message: str, ended: bool) -> None:
        self.ended = ended
        super().__init__(message)


class StreamError(Exception):
    """The server reported an error inside a 200 stream (`data: {"error": ...}`); the
    message is whole (the backend redacts, then flattens it)."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(message)


def _kind(value: Any) -> str:
    """A JSON value's type in JSON's words, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{field}: expected an object, got {_kind(value)}")
    return value


def _text_or_null(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Malformed(f"{field}: expected a string or null, got {_kind(value)}")
    return value


def token_count(value: Any) -> int | None:
    """A token count as recorded: a non-negative integer (true/false are not counts),
    else unknown (None)."""
    return value if type(value) is int and value >= 0 else None


def _usage(obj: dict[str, Any]) -> int | None:
    usage = obj.get("usage")
    return token_count(usage.get("completion_tokens")) if isinstance(usage, dict) else None


def _choices(obj: dict[str, Any], streamed: bool) -> list[dict[str, Any]]:
    choices = obj.get("choices")
    if choices is None and streamed:
        return []  # a usage-only chunk
    if not isinstance(choices, list) or not (choices or streamed):
        raise Malformed(f"choices: expected {'an' if streamed else 'a non-empty'} array, "
                        f"got {_kind(choices) if choices != [] else 'an empty array'}")
    return [_object(c, f"choices[{i}]") for i, c in enumerate(choices)]


def parse_completion(obj: Any) -> Reply:
    """A non-streamed `chat.completion` object; Malformed names what is not one."""
    obj = _object(obj, "the reply")
    choice = _choices(obj, streamed=False)[0]
    message = _object(choice.get("message"), "choices[0].message")
    content = _text_or_null(message.get("content"), "choices[0].message.content")
    finish = _text_or_null(choice.get("finish_reason"), "choices[0].finish_reason")
    return Reply(text=content or "", finish_reason=finish, completion_tokens=_usage(obj),
                 message=message, logprobs=_logprobs(choice, None))


def _logprobs(choice: dict[str, Any], so_far: list[Any] | None) -> list[Any] | None:
    """Append a choice's `logprobs.content` entries (unchecked) to those so far."""
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list):
        return so_far
    out = so_far if so_far is not None else []
    out.extend(content)
    return out


def sse_data(lines: Iterable[bytes]) -> Iterator[str]:
    """The data of each complete server-sent event (comment, event and id lines skipped)."""
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    # an event not closed by a blank line when the stream ends is incomplete: dropped


def _stream_error(obj: dict[str, Any]) -> StreamError:
    err = obj["error"]
    if not isinstance(err, dict):
        return StreamError(None, str(err))
    code = err.get("code")
    return StreamError(code if type(code) is int else None, str(err.get("message") or err))


def _chunk_choice(reply: Reply, choice: dict[str, Any], i: int, start: float,
                  parts: list[str]) -> None:
    index = choice.get("index", 0)
    if type(index) is not int:
        raise Malformed(f"choices[{i}].index: expected an integer, got {_kind(index)}")
    if index != 0:
        return
    delta = choice.get("delta")
    delta = {} if delta is None else _object(delta, f"choices[{i}].delta")
    piece = _text_or_null(delta.get("content"), f"choices[{i}].delta.content")
    if piece:
        if reply.ttft is None:
            reply.ttft = time.perf_counter() - start
        parts.append(piece)
        reply.content_chunks += 1
    reply.logprobs = _logprobs(choice, reply.logprobs)
    finish = _text_or_null(choice.get("finish_reason"), f"choices[{i}].finish_reason")
    reply.finish_reason = finish or reply.finish_reason


def read_stream(lines: Iterable[bytes], start: float) -> Reply:
    """Accumulate a chat.completion.chunk stream. Complete means a finish_reason arrived:
    a stream that ends without one (the connection dropped, or a server interrupted it and
    sent [DONE]) raises StreamCut, so a partial text is never taken for an output. The
    caller bounds the time and bytes (vbw.generate.transport)."""
    reply = Reply()
    parts: list[str] = []
    ended = False
    for data in sse_data(lines):
        if data.strip() == "[DONE]":
            ended = True
            break
        obj = _object(loads(data), "a stream chunk")
        if "error" in obj:
            raise _stream_error(obj)
        reply.completion_tokens = _usage(obj) if _usage(obj) is not None \
            else reply.completion_tokens
        for i, choice in enumerate(_choices(obj, streamed=True)):
            _chunk_choice(reply, choice, i, start, parts)
    if reply.finish_reason is None:
        raise StreamCut("the server ended the stream without a finish_reason" if ended else
                        "the stream broke off before a finish_reason", ended)
    reply.text = "".join(parts)
    return reply
