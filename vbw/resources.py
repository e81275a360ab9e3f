"""Where the bundled conf/, tasks/ and replays/ are: inside the wheel (vbw/_bundled/) or,
in a source checkout or editable install, at the repository root; and the user's cache
folder, where vbw keeps what only saves time (schema verdicts, the compiled report page)."""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    """The bundled directory `name` (conf, tasks or replays)."""
    inside = _PKG / "_bundled" / name
    return inside if inside.is_dir() else _PKG.parent / name


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/vbw` (`~/.cache/vbw` when XDG_CACHE_HOME is unset or relative).
    Nothing in it is needed: an absent, unreadable or read-only folder only costs time."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "vbw"
