"""A run's output folder is never shared by two runs at once.

Default folders already differ (their names carry the process id), but a user may point
two concurrent runs at one `hydra.run.dir`; then one report would silently overwrite the
other, or two live runs would append to one replay. A run claims its folder with a lock
file created exclusively; a folder claimed by a live process is refused, one left by a
dead process is taken over. Running again in the same folder later is fine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vbw.errors import ConfigError

LOCK = ".vbw-run.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(lock: Path) -> int | None:
    try:
        return int(lock.read_text(encoding="ascii").strip() or "0")
    except (OSError, ValueError):
        return None


def claim(out_dir: Path) -> Path:
    """Create the lock or raise ConfigError naming the run that holds the folder."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"hydra.run.dir: cannot create {out_dir} ({e.strerror})") from None
    lock = out_dir / LOCK
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            pid = _holder(lock)
            if pid and pid != os.getpid() and _alive(pid):
                raise ConfigError(f"{out_dir} is in use by another vbw run (pid {pid}); "
                                  "give this run its own hydra.run.dir") from None
            lock.unlink(missing_ok=True)  # left by a dead run
            continue
        except OSError as e:
            raise ConfigError(f"hydra.run.dir: cannot write into {out_dir} "
                              f"({e.strerror})") from None
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
        return lock
    raise ConfigError(f"{out_dir}: cannot claim the folder (another run keeps taking it)")


@contextmanager
def claimed(out_dir: Path) -> Iterator[Path]:
    lock = claim(out_dir)
    try:
        yield out_dir
    finally:
        lock.unlink(missing_ok=True)
