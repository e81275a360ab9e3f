"""The live generation layer: model files, one llama.cpp runtime, constraint engines, canary.

Importing this package needs no live extra: llama_cpp, outlines-core and
huggingface_hub are imported inside the functions that use them.
"""

from __future__ import annotations

from vbw.lazy import lazy_exports

# loaded on first use (vbw.lazy): a replay run asks vbw.generate.engines for the engine
# names only, and must not import the canary, the model files and the runtime for that
_WHERE = {"CANARY_EXPECTED": "vbw.generate.canary", "CANARY_SCHEMA": "vbw.generate.canary",
          "run_canary": "vbw.generate.canary", "ENGINES": "vbw.generate.engines",
          "Constraint": "vbw.generate.engines", "Engine": "vbw.generate.engines",
          "make_engine": "vbw.generate.engines", "ModelFile": "vbw.generate.model",
          "resolve_model": "vbw.generate.model", "sha256_file": "vbw.generate.model",
          "SAMPLING": "vbw.generate.runtime", "Generation": "vbw.generate.runtime",
          "Runtime": "vbw.generate.runtime"}

__all__ = [
    "CANARY_EXPECTED",
    "CANARY_SCHEMA",
    "ENGINES",
    "SAMPLING",
    "Constraint",
    "Engine",
    "Generation",
    "ModelFile",
    "Runtime",
    "make_engine",
    "resolve_model",
    "run_canary",
    "sha256_file",
]

__getattr__ = lazy_exports(__name__, _WHERE)
