"""The live generation layer: model files, one llama.cpp runtime, constraint engines, canary.

Importing this package needs no live extra: llama_cpp, outlines-core and
huggingface_hub are imported inside the functions that use them.
"""

from vbw.generate.canary import CANARY_EXPECTED, CANARY_SCHEMA, run_canary
from vbw.generate.engines import ENGINES, Constraint, Engine, make_engine
from vbw.generate.model import ModelFile, resolve_model, sha256_file
from vbw.generate.runtime import SAMPLING, Generation, Runtime

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
