"""Bounded HTTP exchanges for the server backend: a whole-request deadline and a size cap.

A socket timeout bounds each read, not the request: a server that sends a byte (an SSE
`: ping`, one space of a JSON body, a header line) every half second never trips it, and
a run would hang forever. So every request carries a `Budget`: a watchdog timer that
shuts the connection's socket down when the deadline passes, whatever phase the exchange
is in (connecting, reading headers, reading the body), and a count of the reply's bytes
that stops reading past the cap, before a flooding server can exhaust memory. The
watchdog shuts the socket down (the blocked read returns), and the caller asks
`budget.expired` to tell a deadline from a server that closed the connection.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from functools import partial
from typing import Any

READ_CHUNK = 65536


class ReplyTooLarge(Exception):
    """The reply passed the byte cap; reading stopped there."""


class Budget:
    """One request's deadline (seconds from `start()`) and byte cap; see the module
    docstring. A context manager: the watchdog runs inside the `with` only."""

    def __init__(self, seconds: float, max_bytes: int) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.used = 0
        self.expired = False
        self._socks: list[socket.socket] = []
        self._done = False
        self._ends = float("inf")
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Budget:
        self._ends = time.monotonic() + self.seconds
        self._timer.start()
        return self

    @property
    def over(self) -> bool:
        """The deadline has passed: the watchdog fired, or a socket timeout of the same
        length beat its thread to it."""
        return self.expired or time.monotonic() >= self._ends

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            for sock in self._socks:
                _shut(sock)

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down at the deadline (at once if it has passed)."""
        with self._lock:
            self._socks.append(sock)
            if self.expired:
                _shut(sock)

    def count(self, n: int) -> None:
        self.used += n
        if self.used > self.max_bytes:
            raise ReplyTooLarge(f"the reply exceeds {self.max_bytes} bytes")


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


class _Watched(http.client.HTTPConnection):
    """A connection whose socket, once connected, is watched by the request's budget."""

    def __init__(self, *args: Any, budget: Budget | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._budget = budget

    def connect(self) -> None:
        super().connect()
        if self._budget is not None:
            self._budget.watch(self.sock)


class _Connection(_Watched):
    pass


class _TLSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(_Connection, budget=getattr(req, "budget", None)), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(_TLSConnection, budget=getattr(req, "budget", None)),
                            req, context=self._context)  # type: ignore[attr-defined]


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx surfaces as an HTTPError: a POST must not turn into a GET elsewhere, nor
    carry the key to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def opener() -> urllib.request.OpenerDirector:
    """An opener that follows no redirect, whose connections a request's `budget`
    attribute watches."""
    return urllib.request.build_opener(_HTTPHandler, _HTTPSHandler, _RefuseRedirects)


def read_body(resp: Any, budget: Budget) -> bytes:
    """The whole body, counted against the cap (a Content-Length past it fails at once)."""
    length = resp.headers.get("Content-Length") if resp.headers else None
    if length and length.strip().isdigit() and int(length) > budget.max_bytes:
        raise ReplyTooLarge(f"the reply exceeds {budget.max_bytes} bytes "
                            f"(Content-Length {int(length)})")
    return b"".join(_chunks(resp, budget))


def _chunks(resp: Any, budget: Budget) -> Iterator[bytes]:
    read = getattr(resp, "read1", None) or resp.read
    while True:
        part = read(READ_CHUNK)
        if not part:
            return
        budget.count(len(part))
        yield part


def read_lines(resp: Any, budget: Budget) -> Iterator[bytes]:
    """The body's lines (with their b"\\n"), as they arrive; the cap counts every byte,
    so an unterminated line cannot grow without bound either."""
    pending: list[bytes] = []
    for part in _chunks(resp, budget):
        start = 0
        while (end := part.find(b"\n", start)) >= 0:
            pending.append(part[start:end + 1])
            yield b"".join(pending)
            pending, start = [], end + 1
        if start < len(part):
            pending.append(part[start:])
    if pending:
        yield b"".join(pending)


def read_error_body(resp: Any, budget: Budget, limit: int) -> bytes:
    """At most `limit` bytes of an error body (the rest is not read)."""
    parts, size = [], 0
    while size < limit:
        part = resp.read(min(READ_CHUNK, limit - size))
        if not part:
            break
        budget.count(len(part))
        parts.append(part)
        size += len(part)
    return b"".join(parts)
