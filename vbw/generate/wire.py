"""The HTTP wire of the server backend: base URLs without their secrets, and the two
shapes a chat-completions reply comes in (one JSON object, or a server-sent-event stream).

Kept apart from the backend so the rules that decide what gets recorded (when a stream
counts as complete, where the token count comes from, what a message may show) are small
functions with no network in them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

# query parameters that carry a credential (Azure's api-key, signed URLs' sig, ?token=...)
_KEYLIKE = re.compile(r"key|token|secret|sig|passw|pwd|auth|credential|session", re.I)
MESSAGE_LIMIT = 300  # characters of a server's error message quoted in ours
MIN_SECRET = 4  # shortest credential value scrubbed from messages


class Secret:
    """A credential that prints as *** in repr, str and f-strings: holding it in a Secret
    means no message, log line or repr built from the object can leak it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def redact(text: str, secrets: Iterable[Secret]) -> str:
    """`text` with every secret's value replaced by ***. Values shorter than
    MIN_SECRET are left alone: they would match inside ordinary words ("p" in "llama.cpp"),
    and none of our messages contains them (they show URLs without credentials)."""
    for secret in sorted(secrets, key=lambda s: -len(s.reveal())):
        if len(secret.reveal()) >= MIN_SECRET:
            text = text.replace(secret.reveal(), "***")
    return text


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
    secrets = [Secret(v) for k, v in pairs if _KEYLIKE.search(k) and v]
    if userinfo:
        secrets += [Secret(userinfo)] + [Secret(p) for p in userinfo.split(":", 1)[1:]]
    shown_query = urlencode([(k, v) for k, v in pairs if not _KEYLIKE.search(k)])
    return Endpoint(scheme=parts.scheme, hostport=hostport, path=parts.path.rstrip("/"),
                    query=parts.query, shown_query=shown_query,
                    userinfo=Secret(userinfo) if userinfo else None, secrets=tuple(secrets))


def one_line_text(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def error_message(body: bytes) -> str:
    """The human part of an error body: OpenAI's error.message, FastAPI's detail, or the text."""
    text = body.decode("utf-8", errors="replace")
    try:
        obj = json.loads(text)
    except ValueError:
        return one_line_text(text) or "(empty body)"
    if isinstance(obj, dict):
        err = obj.get("error")
        for found in (err.get("message") if isinstance(err, dict) else err,
                      obj.get("detail"), obj.get("message")):
            if found:
                return one_line_text(found if isinstance(found, str) else json.dumps(found))
    return one_line_text(text)


@dataclass
class Reply:
    """What one chat-completions response said, before it becomes a Generation."""

    text: str = ""
    finish_reason: str | None = None
    completion_tokens: int | None = None  # usage.completion_tokens, when the server sent it
    content_chunks: int = 0  # streamed chunks that carried content (0 when not streamed)
    ttft: float | None = None  # seconds from sending to the first content (streams only)


class StreamCut(Exception):
    """The stream ended before the reply was complete: the connection broke off (the
    server died), or the server ended it with [DONE] but no finish_reason (`ended`)."""

    def __init__(self, message: str, ended: bool) -> None:
        self.ended = ended
        super().__init__(message)


class StreamError(Exception):
    """The server reported an error inside a 200 stream (`data: {"error": ...}`)."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(message)


def _usage(obj: dict[str, Any]) -> int | None:
    usage = obj.get("usage")
    tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) else None


def parse_completion(obj: Any) -> Reply:
    """A non-streamed `chat.completion` object; ValueError when it is not one."""
    try:
        choice = obj["choices"][0]
        content = choice["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("not a chat.completion object (no choices[0].message)") from None
    return Reply(text=content or "", finish_reason=choice.get("finish_reason"),
                 completion_tokens=_usage(obj))


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
        return StreamError(None, one_line_text(str(err)))
    code = err.get("code")
    return StreamError(code if isinstance(code, int) else None,
                       one_line_text(str(err.get("message") or err)))


def read_stream(lines: Iterable[bytes], start: float, deadline: float) -> Reply:
    """Accumulate a chat.completion.chunk stream. Complete means a finish_reason arrived:
    a stream that ends without one (the connection dropped, or a server interrupted it and
    sent [DONE]) raises StreamCut, so a partial text is never taken for an output."""
    reply = Reply()
    parts: list[str] = []
    ended = False
    for data in sse_data(lines):
        if time.perf_counter() > deadline:
            raise TimeoutError("the stream did not finish within the timeout")
        if data.strip() == "[DONE]":
            ended = True
            break
        obj = json.loads(data)
        if not isinstance(obj, dict):
            raise ValueError("a stream chunk is not a JSON object")
        if "error" in obj:
            raise _stream_error(obj)
        reply.completion_tokens = _usage(obj) or reply.completion_tokens
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                if reply.ttft is None:
                    reply.ttft = time.perf_counter() - start
                parts.append(piece)
                reply.content_chunks += 1
            reply.finish_reason = choice.get("finish_reason") or reply.finish_reason
    if reply.finish_reason is None:
        raise StreamCut("the server ended the stream without a finish_reason" if ended else
                        "the stream broke off before a finish_reason", ended)
    reply.text = "".join(parts)
    return reply
