"""A run's output folder is never shared by two runs at once.

How it works and why: docs/design.md, section vbw.cli.run_folder.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vbw.errors import ConfigError

LOCK = ".vbw-run.lock"
_HELD: dict[str, int] = {}  # realpath of a folder this process holds -> its lock's fd


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""


def _open_locked(lock: Path, out_dir: Path) -> int | None:
    """The lock file's fd, locked by this process; None if the lock was a file another
    run removed while this one waited (try again)."""
    try:
        fd = os.open(lock, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise ConfigError(f"hydra.run.dir: cannot write into {out_dir} "
                          f"({e.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        who = _holder(fd)
        os.close(fd)
        raise ConfigError(f"{out_dir} is in use by another vbw run{who}; give this run "
                          "its own hydra.run.dir") from None
    try:
        same = os.stat(lock).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        same = False
    if not same:  # its holder removed it on release: lock the file now under the name
        os.close(fd)
        return None
    return fd


def claim(out_dir: Path) -> bool:
    """Take the folder (creating it) or raise ConfigError naming it; False when this
    process already holds it (nothing to release)."""
    key = os.path.realpath(out_dir)
    if key in _HELD:
        return False
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"hydra.run.dir: cannot create {out_dir} ({e.strerror})") from None
    for _ in range(100):
        fd = _open_locked(out_dir / LOCK, out_dir)
        if fd is not None:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
            _HELD[key] = fd
            return True
    raise ConfigError(f"{out_dir}: cannot claim the folder (other runs keep taking it)")


def release(out_dir: Path) -> None:
    """Give the folder up: the lock file goes (while still locked), then the lock."""
    fd = _HELD.pop(os.path.realpath(out_dir), None)
    if fd is None:
        return
    try:
        (out_dir / LOCK).unlink(missing_ok=True)
    except OSError:
        pass
    os.close(fd)


@contextmanager
def claimed(out_dir: Path) -> Iterator[Path]:
    """The folder held for the block (see `claim`)."""
    mine = claim(out_dir)
    try:
        yield out_dir
    finally:
        if mine:
            release(out_dir)
