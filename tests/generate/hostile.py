"""A hostile HTTP server for the deadline and size-cap tests: raw sockets on 127.0.0.1 in
threads, each answer a function that writes bytes at whatever pace it likes. Every loop
is bounded (a step limit, and a stop event set when the test leaves the `with`), so a
test that fails cannot leave a thread running forever."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

# answer(conn, method, path, body, stop)
Answer = Callable[[socket.socket, str, str, bytes, threading.Event], None]


def drip(conn: socket.socket, head: bytes, unit: bytes, every: float,
         stop: threading.Event, steps: int = 400) -> None:
    """Send `head`, then `unit` every `every` seconds, at most `steps` times."""
    try:
        conn.sendall(head)
        for _ in range(steps):
            if stop.wait(every):
                return
            conn.sendall(unit)
    except OSError:  # the client hung up: the deadline worked
        pass


def flood(conn: socket.socket, head: bytes, unit: bytes, stop: threading.Event,
          limit: int = 1 << 30) -> None:
    """Send `head`, then `unit` as fast as the client reads, up to `limit` bytes."""
    sent = 0
    try:
        conn.sendall(head)
        while sent < limit and not stop.is_set():
            conn.sendall(unit)
            sent += len(unit)
    except OSError:
        pass


def headers(status: int = 200, content_type: str = "application/json",
            length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Hostile:
    """Accepts connections and hands each request to `answer` in its own thread."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.stop = threading.Event()
        self.requests: list[tuple[str, str]] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port = self._sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Hostile:
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self._sock.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                data = b""
                while b"\r\n\r\n" not in data and len(data) < 1 << 20:
                    part = conn.recv(65536)
                    if not part:
                        return
                    data += part
                head, _, body = data.partition(b"\r\n\r\n")
                first = head.split(b"\r\n")[0].decode().split()
                length = next((int(ln.split(b":")[1]) for ln in head.split(b"\r\n")
                               if ln.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    part = conn.recv(65536)
                    if not part:
                        return
                    body += part
            except OSError:
                return
            self.requests.append((first[0], first[1]))
            try:
                self.answer(conn, first[0], first[1], body, self.stop)
                conn.shutdown(socket.SHUT_WR)
            except OSError:  # the client hung up first (a cap or deadline did its job)
                pass


def elapsed(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result or the exception raised) of `fn()`."""
    start = time.monotonic()
    try:
        out: object = fn()
    except Exception as exc:  # noqa: BLE001  the tests inspect it
        out = exc
    return time.monotonic() - start, out
