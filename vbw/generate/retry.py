"""Retry with backoff, in one place for every backend that talks to a remote service.

A backend's one attempt raises `Retry` for a failure worth another attempt (a dropped
connection, a timeout, HTTP 408/429/5xx: vbw.generate.statuses says which), and `Retrying`
runs it again: exponential backoff (from BACKOFF_BASE seconds,
doubling, capped at BACKOFF_CAP; a longer Retry-After is honoured up to RETRY_AFTER_CAP), at most `max_retries` more times, then EngineError stops the run.
A `Retry` with `wait=False` (a stream cut short, asked again unstreamed) is retried at
once. The backend classifies; this loop waits and counts, so a new HTTP backend kind
reuses it instead of copying it (the provider does not retry on its own).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from vbw.errors import EngineError

log = logging.getLogger(__name__)
T = TypeVar("T")


class Retry(Exception):
    """A failure worth another attempt (the cause is already redacted); `wait` False: no
    backoff before the next attempt."""

    wait = True

    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        self.cause = cause
        self.retry_after = retry_after
        super().__init__(cause)


class Retrying:
    """Runs one request's attempts; thread-safe (it counts retries over all threads)."""

    BACKOFF_BASE = 0.5
    BACKOFF_CAP = 8.0
    RETRY_AFTER_CAP = 30.0

    def __init__(self, max_retries: int, what: Callable[[], str]) -> None:
        self.max_retries = max_retries
        self.what = what  # the request as messages name it, e.g. "POST <url>"
        self.retries = 0  # retried attempts so far, over all threads
        self._lock = threading.Lock()

    def retry_wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        delay = min(self.BACKOFF_BASE * 2 ** attempt, self.BACKOFF_CAP)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.RETRY_AFTER_CAP))
        return delay

    def run(self, attempt: Callable[[], T]) -> T:
        """`attempt()` until it returns, raises anything but Retry, or the attempts run
        out (EngineError naming the request, the count and the last cause)."""
        attempts = 1 + self.max_retries
        cause = ""
        for n in range(attempts):
            try:
                return attempt()
            except Retry as exc:
                cause = exc.cause
                if exc.wait and n + 1 < attempts:
                    self._sleep(self.retry_wait(n, exc.retry_after), cause)
        raise EngineError(f"{self.what()} failed after "
                          f"{attempts} attempt{'s' if attempts > 1 else ''}: {cause}")

    def _sleep(self, delay: float, cause: str) -> None:
        with self._lock:
            self.retries += 1
        log.debug("retrying %s in %.1f s: %s", self.what(), delay, cause)
        time.sleep(delay)
