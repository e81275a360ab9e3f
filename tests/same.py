"""One check that two scorings of the same replay agree, however they were made (one
process or two, read back or written while merging): every field of the two `Scored`
values, arrays by value, so a figure added to scoring is compared without touching this."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel


def _fields(x: Any) -> dict[str, Any] | None:
    """A structured value's fields by name (NamedTuple, pydantic model, dataclass, plain
    object), or None for a leaf."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return x._asdict()
    if isinstance(x, BaseModel):
        return {k: getattr(x, k) for k in type(x).model_fields}
    if hasattr(x, "__dataclass_fields__"):
        return {k: getattr(x, k) for k in x.__dataclass_fields__}
    if hasattr(x, "__dict__") and not isinstance(x, type):
        return vars(x)
    return None


def differences(a: Any, b: Any, where: str = "scored") -> list[str]:
    """Where `a` and `b` differ, as dotted paths (empty: they agree)."""
    if type(a) is not type(b):
        return [f"{where}: {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, np.ndarray):
        same = a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        return [] if same else [f"{where}: arrays differ"]
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(map(str, a.keys() ^ b.keys()))} in one only"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}[{k!r}]")]
    if isinstance(a, (list, tuple)) and _fields(a) is None:
        if len(a) != len(b):
            return [f"{where}: {len(a)} != {len(b)} entries"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    fa, fb = _fields(a), _fields(b)
    if fa is not None and fb is not None:
        if fa.keys() != fb.keys():
            return [f"{where}: fields {sorted(fa.keys() ^ fb.keys())} in one only"]
        return [d for k in fa for d in differences(fa[k], fb[k], f"{where}.{k}")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"[:300]]


def assert_same_scored(a: Any, b: Any) -> None:
    """Two scorings agree in every field (see the module docstring)."""
    diff = differences(a, b)
    assert not diff, "the scorings differ:\n" + "\n".join(diff[:20])


def run_outputs(run_dir: Path) -> dict[str, bytes]:
    """The files a `vbw` run wrote, by path in its folder: Hydra's own folder, hidden
    files (the run's lock) and logs left out."""
    return {p.relative_to(run_dir).as_posix(): p.read_bytes()
            for p in sorted(run_dir.rglob("*"))
            if p.is_file() and ".hydra" not in p.parts and not p.name.startswith(".")
            and p.suffix != ".log"}
