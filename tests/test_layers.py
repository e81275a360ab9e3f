"""Imports point backwards only: scoring and reporting never import an engine or the live
stack, so replay scoring installs and runs light."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "vbw"
FORBIDDEN = {"vbw.generate", "llama_cpp", "outlines", "outlines_core", "numba",
             "huggingface_hub"}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_score_report_task_replay_formats_never_import_the_live_stack() -> None:
    for layer in ("score", "report", "task", "replay", "formats", "sweep"):
        for f in (PKG / layer).glob("*.py"):
            bad = {m for m in _imports(f) if any(m == x or m.startswith(x + ".")
                                                    for x in FORBIDDEN)}
            assert not bad, f"{f.relative_to(PKG)} imports {bad}"


def test_replay_mode_loads_no_live_module() -> None:
    import subprocess
    import sys

    code = ("import sys, vbw.app, vbw.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('llama_cpp', 'outlines', 'outlines_core', 'numba', 'huggingface_hub') "
            "or m.startswith('vbw.generate')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_replay_imports_no_later_layer() -> None:
    """The replay format is the contract between generation and scoring: it must not
    depend on either side, nor on the report's wording."""
    later = ("vbw.generate", "vbw.score", "vbw.report", "vbw.app", "vbw.cli")
    for f in (PKG / "replay").glob("*.py"):
        bad = {m for m in _imports(f) if m.startswith(later)}
        assert not bad, f"{f.relative_to(PKG)} imports {bad}"
