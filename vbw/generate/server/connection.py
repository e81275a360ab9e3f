"""The HTTP side of the server backend (vbw.generate.server.client): one POST of a chat
completion, or one GET for a probe, within a deadline and a byte budget
(vbw.generate.transport), the credentials sent only in the Authorization header, and a
failure turned into the error or the retry it means (vbw.generate.statuses), its message
quoting the server's words with every secret scrubbed (vbw.redact)."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Mapping
from typing import Any

from vbw import __version__
from vbw.config import OpenAIBackendConfig
from vbw.errors import EngineError, one_line
from vbw.generate.probe import PROBE_BYTES
from vbw.generate.retry import Retry
from vbw.generate.statuses import CutShort, classify, retry_after
from vbw.generate.transport import (Budget, ReplyTooLarge, opener, read_body,
                                   read_error_body, read_lines)
from vbw.generate.wire import (Reply, Secret, StreamCut, StreamError, error_message,
                               one_line_text, parse_base_url, parse_completion, read_stream)
from vbw.redact import redact
from vbw.task.jsontext.values import loads

_CUT_HINT = ("llama-cpp-python's server ends a stream this way when another request "
             "arrives; vbw asked again without streaming, and the server cut that reply "
             "short too")
_ERROR_BODY_BYTES = 65536


class Connection:
    """The server at `settings.base_url`, reached with `key` (the API key, or None):
    thread-safe, one connection per request."""

    def __init__(self, settings: OpenAIBackendConfig, key: Secret | None) -> None:
        self.settings = settings
        self.endpoint = parse_base_url(settings.base_url)
        self._auth = self._authorization(key)
        # scrubbed from every message that quotes the server, the OS or a URL
        self._secrets = tuple(s for s in (*self.endpoint.secrets, key, self._auth) if s)
        self._opener = opener()

    def _authorization(self, key: Secret | None) -> Secret | None:
        """The Authorization header: Bearer key, else Basic from the URL's userinfo."""
        if key is not None:
            return Secret(f"Bearer {key.reveal()}")
        if self.endpoint.userinfo is not None:
            return Secret("Basic " + b64encode(self.endpoint.userinfo.reveal().encode()).decode())
        return None

    def _request(self, url: str, data: bytes | None, accept: str,
                 budget: Budget) -> urllib.request.Request:
        request = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                         headers={"Accept": accept,
                                                  "User-Agent": f"vbw/{__version__}"})
        request.budget = budget  # type: ignore[attr-defined]  (read by the transport)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._auth is not None:
            request.add_unredirected_header("Authorization", self._auth.reveal())
        return request

    def post(self, data: bytes, has_schema: bool, stream: bool, budget: Budget,
             start: float) -> Reply:
        """The reply to one chat-completion request `data`, read as a stream or as one
        JSON body; a failure raises Retry, CutShort, UnsupportedSchema or EngineError."""
        accept = "text/event-stream" if stream else "application/json"
        request = self._request(self.endpoint.url("/chat/completions"), data, accept, budget)
        try:
            with self._opener.open(request, timeout=self.settings.timeout) as resp:
                return self._read(resp, start, budget)
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc, has_schema, budget) from None
        except StreamError as exc:
            raise self._stream_error(exc, has_schema) from None
        except StreamCut as exc:
            if exc.ended:
                raise CutShort(f"{exc} ({_CUT_HINT})") from None
            raise Retry(str(exc)) from None
        except (OSError, http.client.HTTPException) as exc:
            raise Retry(self.quote(self._cause(exc))) from None
        except ValueError as exc:  # JSON, UTF-8 or shape (wire.Malformed)
            raise EngineError(f"{self.where()}: the reply is not a chat completion: "
                              f"{self.quote(str(exc))}") from None

    def _read(self, resp: http.client.HTTPResponse, start: float, budget: Budget) -> Reply:
        if resp.headers.get_content_type() == "text/event-stream":
            return read_stream(read_lines(resp, budget), start)
        # JSON also when a server cannot stream
        return parse_completion(loads(read_body(resp, budget)))

    @staticmethod
    def _cause(exc: BaseException) -> str:
        reason = getattr(exc, "reason", None)  # URLError wraps the socket error
        return one_line(reason if isinstance(reason, BaseException) else exc)

    def quote(self, text: str) -> str:
        """A server's or the OS's words for a message: secrets and credential patterns
        masked in the whole text first, then flattened and cut to one line."""
        return one_line_text(redact(text, self._secrets))

    def _status_error(self, exc: urllib.error.HTTPError, has_schema: bool,
                      budget: Budget) -> Exception:
        try:
            body = read_error_body(exc, budget, _ERROR_BODY_BYTES)
        except (OSError, http.client.HTTPException, ReplyTooLarge):
            body = b""
        return classify(exc.code, self.quote(error_message(body)), self.where(),
                        has_schema, self.settings.engine, self.settings.api_key_env,
                        retry_after(exc.headers))

    def _stream_error(self, exc: StreamError, has_schema: bool) -> Exception:
        return classify(exc.status or 500, self.quote(str(exc)), self.where(), has_schema,
                        self.settings.engine, self.settings.api_key_env, None)

    def where(self) -> str:
        """The request as a message names it (no credentials)."""
        return f"POST {self.endpoint.shown('/chat/completions')}"

    def get_json(self, url: str, timeout: float) -> tuple[Mapping[str, str] | None, Any]:
        """(headers, JSON body) of a GET within `timeout` seconds in all, or (None, None)
        on any failure (probes only)."""
        budget = Budget(timeout, PROBE_BYTES)
        try:
            with budget, self._opener.open(self._request(url, None, "application/json",
                                                         budget), timeout=timeout) as resp:
                return resp.headers, loads(read_body(resp, budget))
        except (OSError, ValueError, http.client.HTTPException, ReplyTooLarge):
            return None, None
