"""Whole messages over a pipe between a process and the one it forked.

vbw forks for speed in three places (vbw.warm's worker, vbw.modes.forked's second half of
the tasks, vbw.score.split's second half of the items), and each sends one pickled result
back and reads it until the writer closes its end, which happens however the writer
exits: so a crashed child cannot leave its parent waiting. Kept free of imports, since
vbw.warm's caller uses it before the scoring stack is loaded."""

from __future__ import annotations

import os


def send_all(fd: int, data: bytes) -> None:
    """Write all of `data` to a pipe (os.write may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def receive_all(fd: int) -> bytes:
    """Read a pipe until its writer closes it (however the writer exits)."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
