"""The OpenAI-compatible server backend: one `POST {base_url}/chat/completions` per generation.

Any server that speaks the chat-completions API (vLLM, llama.cpp's llama-server, Ollama,
llama-cpp-python's server, OpenAI) can hold the model; its structured-output mode is the
engine, addressed in the server's own dialect (vbw.generate.dialects), and the canary
proves it binds. Only the standard library is used (urllib, one connection per request):
no client library to pin, and proxies from the environment work as everywhere in urllib.

How it works and why: docs/design.md, section vbw.generate.server.client.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from vbw.config import OpenAIBackendConfig
from vbw.errors import EngineError, UnsupportedSchema, one_line
from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.dialects import dialect_for
from vbw.generate.retry import Retry, Retrying
from vbw.generate.server.connection import Connection
from vbw.generate.server.logprobs import interventions
from vbw.generate.statuses import CutShort
from vbw.generate.tools import as_called
from vbw.generate.transport import Budget, ReplyTooLarge
from vbw.generate.wire import Reply, Secret
from vbw.redact import mask_json

log = logging.getLogger(__name__)


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


class OpenAIServerBackend(Backend):
    """Greedy chat completions from an OpenAI-compatible server; see the module docstring.
    Thread-safe: `generate` may run in `settings.concurrency` threads at once."""

    def __init__(self, settings: OpenAIBackendConfig, seed: int,
                 env: Mapping[str, str] = os.environ) -> None:
        self.settings = settings
        self.engine = settings.engine
        self.dialect = dialect_for(settings.dialect)
        self.seed = seed
        key = self._api_key(env)
        self._http = Connection(settings, key)
        self._endpoint = self._http.endpoint
        # masked in every reply (_masked): the key and the URL's credentials
        self._text_secrets = tuple(s for s in (*self._endpoint.text_secrets, key) if s)
        self._lock = threading.Lock()
        self._described: dict[str, Any] | None = None
        self._retrying = Retrying(settings.max_retries, self._http.where)

    def _api_key(self, env: Mapping[str, str]) -> Secret | None:
        return api_key(self.settings, env)

    def __repr__(self) -> str:
        return (f"OpenAIServerBackend(engine={self.engine!r}, "
                f"base_url={self._endpoint.shown()!r}, model={self.settings.model!r})")

    @property
    def sampling(self) -> dict[str, Any]:
        """The decoding fields every request carries (for the replay header)."""
        return {"temperature": 0, "seed": self.seed, **self.dialect.greedy_extras()}

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
        stream = self.settings.stream and config.tool is None  # vbw.generate.tools

        def once() -> Generation:
            nonlocal stream
            try:
                gen = self._attempt(self._body(messages, config, stream),
                                    has_schema=config.schema_ is not None, stream=stream,
                                    tool=config.tool is not None)
                return gen if config.tool is None else as_called(gen, config.tool.name)
            except CutShort as exc:
                stream = False
                log.debug("stream cut short; asking again without streaming: %s", exc.cause)
                raise

        return self._retrying.run(once)

    @property
    def retries(self) -> int:
        """Retried attempts so far, over all threads."""
        return self._retrying.retries

    def _body(self, messages: Sequence[Message], config: GenerateConfig,
              stream: bool) -> bytes:
        body: dict[str, Any] = {"model": self.settings.model,
                                "messages": [dict(m) for m in messages],
                                "max_tokens": config.max_tokens, **self.sampling}
        if config.sampling is not None:
            body.update(self.dialect.sampling_fields(config.sampling))
        if stream:
            body.update(stream=True, stream_options={"include_usage": True})
        else:
            body["stream"] = False
        if config.schema_ is not None:
            self.compile(config.schema_)
            if config.tool is None:
                body.update(self.dialect.schema_fields(config.schema_),
                            **self.dialect.logprob_fields())
            else:  # the schema travels as the forced function's parameters
                body.update(self.dialect.tool_fields(config.tool, config.schema_))
        return json.dumps(body, allow_nan=False).encode("utf-8")

    def _attempt(self, data: bytes, has_schema: bool, stream: bool,
                 tool: bool = False) -> Generation:
        start = time.perf_counter()
        budget = Budget(self.settings.timeout, self.settings.max_reply_bytes)
        try:
            with budget:
                reply = self._http.post(data, has_schema, stream, budget, start)
        except ReplyTooLarge as exc:
            raise EngineError(f"{self._http.where()}: {exc}; not recorded "
                              "(backend.max_reply_bytes)") from None
        except Exception:
            if budget.over:  # whatever the cut-off connection raised
                raise Retry(f"no complete reply within backend.timeout="
                             f"{self.settings.timeout:g} s") from None
            raise
        return self._generation(reply, time.perf_counter() - start, has_schema, tool)

    def _masked(self, reply: Reply) -> tuple[Reply, bool]:
        """The reply with the credentials masked in every string the server sent (text,
        finish reason, message with its tool calls, log-probabilities), and whether one
        was: the one point where a server's reply enters a record or a message."""
        fields = {f: getattr(reply, f) for f in ("text", "finish_reason", "message", "logprobs")}
        masked, found = mask_json(fields, self._text_secrets)
        return replace(reply, **masked), found

    def _generation(self, reply: Reply, seconds: float, has_schema: bool = False,
                    tool: bool = False) -> Generation:
        reply, masked = self._masked(reply)
        finish = reply.finish_reason
        if finish == "abort":
            raise Retry("the server aborted the generation (finish_reason 'abort')")
        if tool and finish in ("tool_calls", "function_call"):
            finish = "stop"  # a forced call ends this way on llama-cpp-python and vLLM
        if finish not in ("stop", "length"):
            raise EngineError(f"{self._http.where()}: "
                              f"finish_reason {finish!r} is neither 'stop' nor 'length'; "
                              "the reply is not a plain completion and is not recorded")
        tokens = reply.completion_tokens
        if tokens is None and reply.content_chunks:
            tokens = reply.content_chunks
        # interventions: only where the server's logprobs come before its grammar, and
        # never for a tool call (its arguments carry no per-token list); tokens that do not
        # join up to the masked text (a key split across tokens) give none
        asked = has_schema and self.dialect.logprob_fields() and not tool
        found = interventions(reply.logprobs, reply.text) if asked else None
        return Generation(text=reply.text, n_tokens=tokens, seconds=seconds,
                          ttft_seconds=reply.ttft, finish_reason=finish, redacted=masked,
                          interventions=found, message=reply.message if tool else None)

    def describe(self) -> dict[str, Any]:
        """Base URL (credentials stripped), served model id, dialect, the sampling fields
        sent, and what the server says about its software (best effort, cached)."""
        with self._lock:
            if self._described is None:
                server = self.dialect.probe(self._http.get_json, self._endpoint,
                                            self.settings.model)
                self._described = {
                    "base_url": self._endpoint.shown(), "model": self.settings.model,
                    "dialect": self.settings.dialect, "sampling": self.sampling,
                    "stream": self.settings.stream,
                    "server": {k: self._http.quote(v) for k, v in server.items()}}
            return json.loads(json.dumps(self._described))
