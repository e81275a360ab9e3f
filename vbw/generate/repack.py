"""llama.cpp's extra weight buffer types ("repack"): the `model.repack` setting.

llama.cpp can copy the weights into CPU-specific layouts at load (its AMX and CPU_REPACK
buffer types) for faster matrix products. On CPUs with AMX that path crashes in the first
decode (upstream ggml-org/llama.cpp#20824), so `auto` turns it off where the CPU reports
AMX and keeps llama.cpp's default elsewhere. The value a run used is recorded in the
replay header (`repack`), since another kernel may pick another argmax.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Repack = Literal["auto", "on", "off"]
CPUINFO = Path("/proc/cpuinfo")
# CPU flags under which llama.cpp's extra buffer types are known to crash
CRASHING_FLAGS = ("amx_int8", "amx_tile", "amx_bf16")
_LOCK = threading.Lock()  # the default-params patch below is process-wide while it lasts


def cpu_flags(cpuinfo: Path | None = None) -> frozenset[str]:
    """The CPU's feature flags as /proc/cpuinfo (or `cpuinfo`) lists them; empty where
    there is no such file."""
    try:
        text = (cpuinfo or CPUINFO).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def crash_flag(cpuinfo: Path | None = None) -> str | None:
    """The first CPU flag under which repacking is known to crash, or None."""
    flags = cpu_flags(cpuinfo)
    return next((f for f in CRASHING_FLAGS if f in flags), None)


def resolve(setting: Repack, cpuinfo: Path | None = None) -> bool:
    """Whether llama.cpp may repack the weights: `on` and `off` as said; `auto` off on a
    CPU whose flags are in CRASHING_FLAGS, on elsewhere (llama.cpp's own default)."""
    if setting == "auto":
        return crash_flag(cpuinfo) is None
    return setting == "on"


@contextlib.contextmanager
def extra_bufts(llama_cpp: Any, enabled: bool) -> Iterator[None]:
    """While a `llama_cpp.Llama` is constructed inside this block, its model params have
    `use_extra_bufts = enabled` (llama-cpp-python's constructor has no argument for it;
    it starts from `llama_model_default_params()`, which this wraps)."""
    if enabled:
        yield
        return
    low = llama_cpp.llama_cpp
    default = low.llama_model_default_params

    def without() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    with _LOCK:
        low.llama_model_default_params = without
        try:
            yield
        finally:
            low.llama_model_default_params = default
