"""jsonschema's `check_schema` verdicts, remembered across runs in the user's cache folder.

How it works and why: docs/design.md, section vbw.task.schema.cache.
"""

from __future__ import annotations

import atexit
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from vbw.parallel import at_leave, at_start
from vbw.resources import cache_dir

MAX_BYTES = 8 << 20  # ~250,000 schemas; past it nothing is appended
_DIGEST_HEX = 32
_HEX = frozenset("0123456789abcdef")


def cache_file() -> Path:
    """Where the valid verdicts for the installed jsonschema are kept."""
    from importlib.metadata import version

    return cache_dir() / f"valid-schemas-jsonschema-{version('jsonschema')}.txt"


class VerdictCache:
    """The valid digests read from the cache file (on first use), and those to append."""

    def __init__(self) -> None:
        self._path: Path | None = None
        self._known: set[str] | None = None
        self._new: list[str] = []
        # a child process (vbw.parallel) writes what it learns itself, on its way out; what
        # its parent learned before the child started is the parent's to write
        at_start(self._forget_new)
        at_leave(self.flush)

    def _load(self) -> set[str]:
        if self._known is None:
            self._known = set()
            try:
                self._path = cache_file()
            except (OSError, RuntimeError, ImportError, LookupError):  # no home, no metadata
                return self._known
            atexit.register(self.flush)
            try:
                data = self._path.read_bytes()
            except OSError:
                return self._known
            self._known = {line for line in data.decode("ascii", "replace").split("\n")
                           if len(line) == _DIGEST_HEX and set(line) <= _HEX}
        return self._known

    def _forget_new(self) -> None:
        self._new = []

    def digest(self, schema: Any) -> str | None:
        """The schema's digest, or None when it is not plain JSON (not cached)."""
        try:
            text = orjson.dumps(schema)
            if orjson.loads(text) != schema:
                return None
        except (TypeError, orjson.JSONEncodeError):
            return None
        return hashlib.blake2b(text, digest_size=16).hexdigest()

    def known_valid(self, digest: str) -> bool:
        return digest in self._load()

    def remember(self, digest: str) -> None:
        known = self._load()
        if digest not in known:
            known.add(digest)
            self._new.append(digest)

    def flush(self) -> None:
        """Append the new digests in one write; any failure leaves the file as it was."""
        new, self._new = self._new, []
        if not new or self._path is None:
            return
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if os.fstat(fd).st_size < MAX_BYTES:
                    os.write(fd, "".join(f"{d}\n" for d in new).encode("ascii"))
            finally:
                os.close(fd)
        except OSError:
            pass


VERDICTS = VerdictCache()
