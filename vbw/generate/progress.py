"""A progress line on stderr for live runs: items done, items/s, ETA. Quiet off a terminal
unless forced, so logs and CI output stay clean."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, done: int, label: str, mode: str = "auto",
                 stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = mode == "on" or (mode == "auto" and self.stream.isatty())
        self.total, self.done, self.label = total, done, label
        self._start_done = done
        self._start = time.perf_counter()
        self.draw()

    def advance(self) -> None:
        self.done += 1
        self.draw()

    def draw(self) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self._start
        new = self.done - self._start_done
        rate = new / elapsed if elapsed > 0 and new else 0.0
        eta = (self.total - self.done) / rate if rate else 0.0
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                          f"{rate:.2f} items/s ETA {_clock(eta) if rate else '?'}  ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
