"""Where the bundled conf/, tasks/ and replays/ are: inside the wheel (vbw/_bundled/) or,
in a source checkout or editable install, at the repository root."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def bundled(name: str) -> Path:
    """The bundled directory `name` (conf, tasks or replays)."""
    inside = _PKG / "_bundled" / name
    return inside if inside.is_dir() else _PKG.parent / name
