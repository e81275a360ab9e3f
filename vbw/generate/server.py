"""The OpenAI-compatible server backend: one `POST {base_url}/chat/completions` per generation.

Any server that speaks the chat-completions API (vLLM, llama.cpp's llama-server, Ollama,
llama-cpp-python's server, OpenAI) can hold the model; its structured-output mode is the
engine, addressed in the server's own dialect (vbw.generate.dialects), and the canary
proves it binds. Only the standard library is used (urllib, one connection per request):
no client library to pin, and proxies from the environment work as everywhere in urllib.

What becomes a Generation, and what never does:
- Only a complete reply: finish_reason `stop` or `length`. Connection errors, timeouts,
  HTTP 408/429/5xx, a stream that ends without a finish_reason and vLLM's `abort` are
  retried with exponential backoff (0.5 s doubling, capped at 8 s; a longer Retry-After is
  honoured up to 30 s), at most `max_retries` times; then EngineError stops the run.
- HTTP 400 or 422 on a request that carries a schema raises UnsupportedSchema (the item is
  recorded as unsupported, like an engine that cannot compile the schema). Any other 4xx
  (401, 404, ...), and 400/422 without a schema, raises EngineError: those are not about
  the schema, and marking every constrained item unsupported would hide them.
- Any other finish_reason (`tool_calls`, `function_call`, `content_filter`, none) raises
  EngineError: the text is not the model's plain greedy continuation, so it is not recorded.
- n_tokens is usage.completion_tokens. A stream asks for it (stream_options.include_usage);
  when the server sends none (llama-cpp-python's server does not), n_tokens is the number
  of chunks that carried content, one token each on the servers above except where a
  multi-byte character is held back and merged (then it undercounts slightly). A
  non-streamed reply without usage gets 0. ttft_seconds is measured only when streaming.
- seconds and ttft_seconds time the successful attempt only, not retries or backoff.

Credentials: the API key (read from the variable named by api_key_env) and a base URL's
userinfo are held as Secrets and sent only in the Authorization header (Bearer, or Basic
for userinfo when there is no key); redirects are refused, so they never follow one;
every message quoting a server or a URL is scrubbed of them.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Mapping, Sequence
from typing import Any

from vbw import __version__
from vbw.config import OpenAIBackendConfig
from vbw.errors import EngineError, UnsupportedSchema, one_line
from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.dialects import GREEDY_EXTRAS, schema_fields
from vbw.generate.probe import probe_server
from vbw.generate.wire import (Reply, Secret, StreamCut, StreamError, error_message,
                               parse_base_url, parse_completion, read_stream, redact)

log = logging.getLogger(__name__)

_CUT_HINT = ("llama-cpp-python's server ends a stream this way when another request "
             "arrives; vbw asked again without streaming, and the server cut that reply "
             "short too")
_ERROR_BODY_BYTES = 65536


def api_key(settings: OpenAIBackendConfig, env: Mapping[str, str]) -> Secret | None:
    """The API key from the variable `api_key_env` names (None without one); a variable
    that is unset or empty is an error naming the variable, never a value."""
    name = settings.api_key_env
    if name is None:
        return None
    if not env.get(name):
        raise EngineError(f"backend.api_key_env names {name}, which is not set "
                          "or empty in the environment")
    return Secret(env[name])


class _Retry(Exception):
    """A failure worth another attempt (the cause is already redacted)."""

    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        self.cause = cause
        self.retry_after = retry_after
        super().__init__(cause)


class _CutShort(_Retry):
    """The server ended a stream with [DONE] but no finish_reason: ask again unstreamed."""


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx surfaces as an HTTPError: a POST must not turn into a GET elsewhere, nor
    carry the key to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    try:
        return float(headers.get("Retry-After", "")) if headers else None
    except ValueError:
        return None  # an HTTP date: the plain backoff applies


class OpenAIServerBackend(Backend):
    """Greedy chat completions from an OpenAI-compatible server; see the module docstring.
    Thread-safe: `generate` may run in `settings.concurrency` threads at once."""

    BACKOFF_BASE = 0.5
    BACKOFF_CAP = 8.0
    RETRY_AFTER_CAP = 30.0

    def __init__(self, settings: OpenAIBackendConfig, seed: int,
                 env: Mapping[str, str] = os.environ) -> None:
        self.settings = settings
        self.engine = settings.engine
        self.seed = seed
        self._endpoint = parse_base_url(settings.base_url)
        key = self._api_key(env)
        self._auth = self._authorization(key)
        self._secrets = tuple(s for s in (*self._endpoint.secrets, key, self._auth) if s)
        self._opener = urllib.request.build_opener(_RefuseRedirects)
        self._lock = threading.Lock()
        self._described: dict[str, Any] | None = None
        self.retries = 0  # retried attempts so far, over all threads

    def _api_key(self, env: Mapping[str, str]) -> Secret | None:
        return api_key(self.settings, env)

    def _authorization(self, key: Secret | None) -> Secret | None:
        """The Authorization header: Bearer key, else Basic from the URL's userinfo."""
        if key is not None:
            return Secret(f"Bearer {key.reveal()}")
        if self._endpoint.userinfo is not None:
            return Secret("Basic " + b64encode(self._endpoint.userinfo.reveal().encode()).decode())
        return None

    def __repr__(self) -> str:
        return (f"OpenAIServerBackend(engine={self.engine!r}, "
                f"base_url={self._endpoint.shown()!r}, model={self.settings.model!r})")

    @property
    def sampling(self) -> dict[str, Any]:
        """The decoding fields every request carries (for the replay header)."""
        return {"temperature": 0, "seed": self.seed, **GREEDY_EXTRAS[self.settings.dialect]}

    def compile(self, schema: Mapping[str, Any]) -> float:
        """The server compiles; this only checks the schema can be sent as JSON."""
        try:
            json.dumps(schema, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise UnsupportedSchema(f"schema is not JSON-serialisable: {one_line(exc)}") from None
        return 0.0

    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        """One chat completion, retried on transient failures (module docstring). A stream
        the server ends without a finish_reason (llama-cpp-python's server does so when
        another request arrives, unless started with --interrupt_requests False) is sent
        again at once without streaming, which such a server does not interrupt."""
        stream = self.settings.stream
        attempts = 1 + self.settings.max_retries
        cause = ""
        for attempt in range(attempts):
            try:
                return self._attempt(self._body(messages, config, stream),
                                     has_schema=config.schema_ is not None, stream=stream)
            except _CutShort as exc:
                cause, stream = exc.cause, False
                log.debug("stream cut short; asking again without streaming: %s", cause)
            except _Retry as exc:
                cause = exc.cause
                if attempt + 1 < attempts:
                    self._backoff(attempt, exc.retry_after, cause)
        raise EngineError(f"POST {self._endpoint.shown('/chat/completions')} failed after "
                          f"{attempts} attempt{'s' if attempts > 1 else ''}: {cause}")

    def _body(self, messages: Sequence[Message], config: GenerateConfig,
              stream: bool) -> bytes:
        body: dict[str, Any] = {"model": self.settings.model,
                                "messages": [dict(m) for m in messages],
                                "max_tokens": config.max_tokens, **self.sampling}
        if stream:
            body.update(stream=True, stream_options={"include_usage": True})
        else:
            body["stream"] = False
        if config.schema_ is not None:
            self.compile(config.schema_)
            body.update(schema_fields(self.settings.dialect, config.schema_))
        return json.dumps(body, allow_nan=False).encode("utf-8")

    def _backoff(self, attempt: int, retry_after: float | None, cause: str) -> None:
        delay = min(self.BACKOFF_BASE * 2 ** attempt, self.BACKOFF_CAP)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.RETRY_AFTER_CAP))
        with self._lock:
            self.retries += 1
        log.debug("retrying POST %s in %.1f s: %s", self._endpoint.shown("/chat/completions"),
                  delay, cause)
        time.sleep(delay)

    def _request(self, url: str, data: bytes | None, accept: str) -> urllib.request.Request:
        request = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                         headers={"Accept": accept,
                                                  "User-Agent": f"vbw/{__version__}"})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._auth is not None:
            request.add_unredirected_header("Authorization", self._auth.reveal())
        return request

    def _attempt(self, data: bytes, has_schema: bool, stream: bool) -> Generation:
        accept = "text/event-stream" if stream else "application/json"
        request = self._request(self._endpoint.url("/chat/completions"), data, accept)
        start = time.perf_counter()
        try:
            with self._opener.open(request, timeout=self.settings.timeout) as resp:
                reply = self._read(resp, start)
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc, has_schema) from None
        except StreamError as exc:
            raise self._stream_error(exc, has_schema) from None
        except StreamCut as exc:
            if exc.ended:
                raise _CutShort(f"{exc} ({_CUT_HINT})") from None
            raise _Retry(str(exc)) from None
        except (OSError, http.client.HTTPException) as exc:
            raise _Retry(self._redact(self._cause(exc))) from None
        except ValueError as exc:
            raise EngineError(f"POST {self._endpoint.shown('/chat/completions')}: the reply "
                              f"is not a chat completion: {self._redact(one_line(exc))}") from None
        return self._generation(reply, time.perf_counter() - start)

    def _read(self, resp: http.client.HTTPResponse, start: float) -> Reply:
        if resp.headers.get_content_type() == "text/event-stream":
            return read_stream(resp, start, start + self.settings.timeout)
        return parse_completion(json.loads(resp.read()))  # also when a server cannot stream

    @staticmethod
    def _cause(exc: BaseException) -> str:
        reason = getattr(exc, "reason", None)  # URLError wraps the socket error
        return one_line(reason if isinstance(reason, BaseException) else exc)

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _status_error(self, exc: urllib.error.HTTPError, has_schema: bool) -> Exception:
        try:
            body = exc.read(_ERROR_BODY_BYTES)
        except (OSError, http.client.HTTPException):
            body = b""
        return self._classify(exc.code, self._redact(error_message(body)), has_schema,
                              _retry_after(exc.headers))

    def _stream_error(self, exc: StreamError, has_schema: bool) -> Exception:
        return self._classify(exc.status or 500, self._redact(str(exc)), has_schema, None)

    def _classify(self, status: int, message: str, has_schema: bool,
                  retry_after: float | None) -> Exception:
        """The exception an HTTP status stands for (module docstring)."""
        if status in (408, 429) or status >= 500:
            return _Retry(f"HTTP {status}: {message}", retry_after)
        where = f"POST {self._endpoint.shown('/chat/completions')}"
        if 300 <= status < 400:
            return EngineError(f"{where}: the server redirects (HTTP {status}); set "
                               "backend.base_url to the URL it redirects to")
        if status in (400, 422) and has_schema:
            return UnsupportedSchema(f"{self.engine} rejected the request carrying the "
                                     f"schema (HTTP {status}): {message}")
        hint = ""
        if status in (401, 403):
            hint = (f" (check the key in ${self.settings.api_key_env})"
                    if self.settings.api_key_env else " (set backend.api_key_env)")
        return EngineError(f"{where} -> HTTP {status}: {message}{hint}")

    def _generation(self, reply: Reply, seconds: float) -> Generation:
        finish = reply.finish_reason
        if finish == "abort":
            raise _Retry("the server aborted the generation (finish_reason 'abort')")
        if finish not in ("stop", "length"):
            raise EngineError(f"POST {self._endpoint.shown('/chat/completions')}: "
                              f"finish_reason {finish!r} is neither 'stop' nor 'length'; "
                              "the reply is not a plain completion and is not recorded")
        tokens = reply.completion_tokens
        return Generation(text=reply.text,
                          n_tokens=reply.content_chunks if tokens is None else tokens,
                          seconds=seconds, ttft_seconds=reply.ttft, finish_reason=finish)

    def describe(self) -> dict[str, Any]:
        """Base URL (credentials stripped), served model id, dialect, the sampling fields
        sent, and what the server says about its software (best effort, cached)."""
        with self._lock:
            if self._described is None:
                server = probe_server(self._get_json, self._endpoint, self.settings.model)
                self._described = {
                    "base_url": self._endpoint.shown(), "model": self.settings.model,
                    "dialect": self.settings.dialect, "sampling": self.sampling,
                    "stream": self.settings.stream,
                    "server": {k: self._redact(v) for k, v in server.items()}}
            return json.loads(json.dumps(self._described))

    def _get_json(self, url: str, timeout: float) -> tuple[Mapping[str, str] | None, Any]:
        """(headers, JSON body) of a GET, or (None, None) on any failure (probes only)."""
        try:
            with self._opener.open(self._request(url, None, "application/json"),
                                   timeout=timeout) as resp:
                return resp.headers, json.loads(resp.read(2_000_000))
        except (OSError, ValueError, http.client.HTTPException):
            return None, None
