"""Progress of a live run on stderr: items done, items/s, time left.

On a terminal it is a bar redrawn in place. Off a terminal (a log file, CI, a sweep job's
captured stderr) a redrawn bar would be noise, but silence for the minutes a live run takes
is worse: the run looks hung. So there it is one plain line at least every `interval`
seconds (30 by default) while the run lasts, written by a small heartbeat thread so that a
slow item cannot hold it back; a run shorter than that prints nothing. `progress=on` forces
the bar, `progress=off` silences both. The clock is passed in, so the timing is testable.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

LOG_INTERVAL = 30.0  # seconds between progress lines off a terminal


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, done: int, label: str, mode: str = "auto",
                 stream: TextIO | None = None, *, interval: float = LOG_INTERVAL,
                 clock: Callable[[], float] = time.monotonic, heartbeat: bool = True) -> None:
        self.stream = stream or sys.stderr
        tty = self.stream.isatty()
        self.enabled = mode == "on" or (mode == "auto" and tty)  # the bar
        self.logging = mode == "auto" and not tty  # plain lines every `interval`
        self.total, self.done, self.label = total, done, label
        self.interval, self.clock = interval, clock
        self._start_done = done
        self._start = self._last = clock()
        self._lines = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.logging and heartbeat:
            self._thread = threading.Thread(target=self._beat, name="vbw-progress",
                                            daemon=True)
            self._thread.start()
        self.draw()

    def _rate(self) -> tuple[float, float]:
        elapsed = self.clock() - self._start
        new = self.done - self._start_done
        rate = new / elapsed if elapsed > 0 and new else 0.0
        return rate, (self.total - self.done) / rate if rate else 0.0

    def advance(self) -> None:
        with self._lock:
            self.done += 1
        self.draw()
        self.tick()

    def tick(self) -> None:
        """Off a terminal: one line if `interval` seconds passed since the last one."""
        if not self.logging:
            return
        with self._lock:
            now = self.clock()
            if now - self._last < self.interval:
                return
            self._last = now
            rate, eta = self._rate()
            speed = f"{rate:.2f} items/s, about {_clock(eta)} left" if rate else \
                "no item finished yet"
            self.stream.write(f"vbw: {self.label}: {self.done}/{self.total} items, {speed} "
                              f"({_clock(now - self._start)} elapsed)\n")
            self.stream.flush()
            self._lines += 1

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.interval)):
            self.tick()

    def draw(self) -> None:
        if not self.enabled:
            return
        rate, eta = self._rate()
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                          f"{rate:.2f} items/s ETA {_clock(eta) if rate else '?'}  ")
        self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
        elif self._lines:  # the lines said where it was: say that it ended
            with self._lock:
                self.stream.write(f"vbw: {self.label}: {self.done}/{self.total} items done in "
                                  f"{_clock(self.clock() - self._start)}\n")
                self.stream.flush()
