"""`python -m tests.generate.serve ARGS`: llama-cpp-python's server (`python -m
llama_cpp.server ARGS`) with vbw's `model.repack` setting, which the server has no option
for: VBW_REPACK=auto|on|off (default auto, as vbw's). The server tests start it through
this, so that on a CPU with AMX they run the server as vbw runs its model."""

from __future__ import annotations

import os
import runpy

import llama_cpp

from vbw.generate.repack import extra_bufts, resolve

if __name__ == "__main__":
    setting = os.environ.get("VBW_REPACK", "auto")
    if setting not in ("auto", "on", "off"):
        raise SystemExit(f"VBW_REPACK must be auto, on or off, not {setting!r}")
    with extra_bufts(llama_cpp, resolve(setting)):  # type: ignore[arg-type]
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
