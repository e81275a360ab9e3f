"""Engine-layer behaviour that needs no model: import hygiene, names, guards."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vbw.errors import ConfigError, EngineError
from vbw.generate.engines import _order_conflicts, make_engine


def test_import_needs_no_live_extra() -> None:
    code = (
        "import sys, vbw.generate as g; assert g.__all__;"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('llama_cpp', 'outlines', 'outlines_core', 'huggingface_hub', 'vbw.score', 'vbw.report')"
        " or m.startswith(('vbw.score', 'vbw.report'))];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unknown_engine_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match="unknown engine 'xgrammar'; valid engines: outlines, llamacpp, llguidance"):
        make_engine("xgrammar", runtime=None)  # type: ignore[arg-type]


def test_order_conflicts_found_in_nested_objects() -> None:
    ok = {"properties": {"x": {}, "y": {}}, "required": ["x"]}
    nested = {"properties": {"outer": {"properties": {"o": {}, "r": {}}, "required": ["r"]}}}
    assert _order_conflicts(ok) == []
    assert _order_conflicts(nested) == ["$.properties.outer.r"]


def test_missing_model_file(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    from vbw.generate.runtime import Runtime

    with pytest.raises(EngineError, match="does not exist"):
        Runtime(tmp_path / "absent.gguf")
