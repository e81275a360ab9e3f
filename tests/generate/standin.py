"""A scripted stand-in for an OpenAI-compatible server, for protocol tests (retries, status
codes, credentials, stream shapes) that a real server cannot be made to misbehave for.
Everything about generation itself is tested against the real llama-cpp-python server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    """A TCP port nothing listens on right now (bound once by the OS, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Canned:
    """One scripted response."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


def completion(text: str, finish: str | None = "stop", tokens: int | None = 3) -> Canned:
    """A non-streamed chat.completion."""
    obj: dict[str, Any] = {"object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}]}
    if tokens is not None:
        obj["usage"] = {"prompt_tokens": 5, "completion_tokens": tokens, "total_tokens": 5 + tokens}
    return Canned(body=json.dumps(obj).encode())


def error(status: int, message: str, **headers: str) -> Canned:
    """An OpenAI-shaped error body."""
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return Canned(status, body.encode(), {"Content-Type": "application/json", **headers})


def stream(events: list[Any], done: bool = True) -> Canned:
    """An SSE stream of `events` (dicts become `data: {json}`), then `data: [DONE]`."""
    lines = [": a comment line, ignored\n\n"]
    lines += [f"data: {json.dumps(e) if isinstance(e, dict) else e}\n\n" for e in events]
    lines += ["data: [DONE]\n\n"] if done else []
    return Canned(body="".join(lines).encode(), headers={"Content-Type": "text/event-stream"})


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


class StandIn:
    """http.server in a thread: POSTs are answered from `script` in order (a 500 once it
    runs out), GETs from `gets` by path (404 otherwise); every request is recorded."""

    def __init__(self, script: list[Canned], gets: dict[str, Canned] | None = None) -> None:
        self.script = list(script)
        self.gets = gets or {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def posts(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST"]

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Canned:
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers,
                                  "body": json.loads(body) if body else None})
            if method == "GET":
                return self.gets.get(path.split("?")[0], Canned(404, b'{"detail":"Not Found"}'))
            return self.script.pop(0) if self.script else error(500, "script exhausted")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                canned = standin._answer(method, self.path, dict(self.headers),
                                         self.rfile.read(size))
                self.send_response(canned.status)
                for name, value in {**canned.headers,
                                    "Content-Length": str(len(canned.body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(canned.body)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self._serve("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def llama_cpp_python_schema(request: dict[str, Any]) -> Any:
    """The schema of a request in the llama_cpp_python dialect, or None."""
    return (request.get("response_format") or {}).get("schema")


class EchoServer(StandIn):
    """The scripted fake backend (tests.generate.scripted.echo_script) served over HTTP,
    for whole CLI runs without a model: the canary gets its value, other requests
    echo_script's text. `schema_of` reads a request's schema where the server's dialect
    puts it (llama_cpp_python's by default; a request whose schema it does not find is
    answered as free text). `leak` is appended to every free-text answer (a model echoing
    a key); a request for model id `fail` gets HTTP 401 with `leak` in the message (a
    server quoting credentials)."""

    def __init__(self, leak: str = "",
                 schema_of: Callable[[dict[str, Any]], Any] = llama_cpp_python_schema) -> None:
        super().__init__([])
        self.leak = leak
        self.schema_of = schema_of

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Canned:
        from vbw.generate.backend import GenerateConfig
        from tests.generate.scripted import echo_script

        if method == "GET":
            return super()._answer(method, path, headers, body)
        req = json.loads(body)
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers,
                                  "body": req})
        if req["model"] == "fail":
            return error(401, f"denied: {self.leak}")
        schema = self.schema_of(req)
        text = echo_script(req["messages"], GenerateConfig(max_tokens=req["max_tokens"],
                                                           schema=schema))
        return completion(text if schema is not None else f"{text} {self.leak}")
