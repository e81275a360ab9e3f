"""Shared live fixtures: one SmolLM2 runtime for the whole session (loading costs ~1 s,
but two engines and many tests must see the very same Llama object)."""

from __future__ import annotations

import os

import pytest

LIVE_REASON = "llama_cpp is not importable (install the live extra: pip install 'validbutwrong[live]')"


def _llama_importable() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except Exception:  # ImportError, or a broken native library (OSError)
        return False
    return True


HAVE_LLAMA = _llama_importable()
# llama.cpp spin-waits its threads: on a busy 2-core machine use VBW_TEST_THREADS=1
THREADS = int(os.environ.get("VBW_TEST_THREADS", "0")) or None


def pytest_configure(config: pytest.Config) -> None:
    """In CI the live stack is installed on purpose: a missing one is a failure, not a skip."""
    if os.environ.get("CI") and not HAVE_LLAMA:
        raise pytest.UsageError(f"CI is set but {LIVE_REASON}")


@pytest.fixture(scope="session")
def smollm2_file():
    if not HAVE_LLAMA:
        pytest.skip(LIVE_REASON)
    from vbw.config import bundled_model
    from vbw.generate.model import resolve_model

    return resolve_model(bundled_model("smollm2_135m"))


@pytest.fixture(scope="session")
def runtime(smollm2_file):
    from vbw.generate.runtime import Runtime

    return Runtime(smollm2_file.path, n_ctx=2048, n_threads=THREADS)


@pytest.fixture(scope="session")
def engines(runtime):
    from vbw.generate.engines import make_engine

    return {name: make_engine(name, runtime) for name in ("outlines", "llamacpp")}


@pytest.fixture(scope="session")
def backends(runtime, engines):
    """The in-process backend per engine, on the one shared runtime."""
    from vbw.generate.local import LocalBackend

    return {name: LocalBackend(runtime, engine) for name, engine in engines.items()}


def complete(backend, prompt: str, schema, max_tokens: int):
    """One user message through a backend, as the arms send it."""
    from vbw.generate.backend import GenerateConfig

    return backend.generate([{"role": "user", "content": prompt}],
                            GenerateConfig(max_tokens=max_tokens, schema=schema))
