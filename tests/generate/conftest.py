"""Shared live fixtures: one SmolLM2 runtime for the whole session (loading costs ~1 s,
but two engines and many tests must see the very same Llama object), and one real
llama-cpp-python server on the same GGUF for the server backend's tests."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import start_vbw
from tests.generate.standin import free_port

ROOT = Path(__file__).resolve().parents[2]
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

    return {name: make_engine(name, runtime) for name in ("outlines", "llamacpp", "llguidance")}


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


# llama-cpp-python's OpenAI-compatible server needs the [server] extra of llama-cpp-python
SERVER_DEPS = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
SERVER_START_TIMEOUT = 60.0


class LlamaServer:
    """`python -m llama_cpp.server` on SmolLM2, bound to 127.0.0.1 on a fixed port, so
    `kill()` then `start()` (or `restart()`) brings it back at the same `base_url` for
    tests of a server that dies mid-run. One thread for generation and one for batches
    (others share the cores); `--interrupt_requests False` so concurrent requests queue
    instead of cutting each other's streams short."""

    def __init__(self, model_path: Path, log_path: Path, threads: int = 1,
                 n_ctx: int = 2048, interrupt_requests: bool = False,
                 chat_format: str | None = None) -> None:
        self.model_path = model_path
        self.chat_format = chat_format  # e.g. chatml-function-calling (tool_call arms)
        self.threads, self.n_ctx = threads, n_ctx
        self.interrupt_requests = interrupt_requests  # True: the server's own default
        self.log_path = log_path
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.model = ""  # the served model id, read from GET /v1/models
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        """Start the server and wait (bounded) until GET /v1/models answers."""
        # llama_cpp.server through a launcher that applies model.repack (auto: off on AMX)
        cmd = [sys.executable, "-m", "tests.generate.serve", "--model", str(self.model_path),
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
               "--verbose", "False"]
        if not self.interrupt_requests:
            cmd += ["--interrupt_requests", "False"]
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: "
                                   f"{self._log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=1) as resp:
                    self.model = json.load(resp)["data"][0]["id"]
                return
            except (OSError, ValueError, KeyError, IndexError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout:.0f} s: "
                           f"{self._log_tail()}")

    def kill(self) -> None:
        """SIGKILL, as a crash would: no graceful shutdown."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self) -> None:
        self.kill()
        self.start()

    def _log_tail(self) -> str:
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        return " | ".join(lines[-5:]) or "(no output)"


@pytest.fixture(scope="session")
def llama_server(smollm2_file, tmp_path_factory):
    """The real llama-cpp-python server on SmolLM2 for the session (see LlamaServer)."""
    missing = [m for m in SERVER_DEPS if importlib.util.find_spec(m) is None]
    if missing:
        reason = (f"llama_cpp.server needs {', '.join(missing)} "
                  "(pip install 'llama-cpp-python[server]')")
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    server = LlamaServer(smollm2_file.path, tmp_path_factory.mktemp("llama_server") / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def kill_server_after_first_item(server: LlamaServer, args: list[str], replay: Path,
                                 run_dir: Path, timeout: float) -> subprocess.CompletedProcess:
    """Start `vbw *args` live, kill `server` once the first item is in `replay`, and
    return the finished run (its return code and stderr are the caller's to check)."""
    proc = start_vbw(*args, f"hydra.run.dir={run_dir}", cwd=run_dir.parent)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if replay.exists() and len(replay.read_text().splitlines()) >= 2:  # one item in
                break
            time.sleep(0.05)
        server.kill()
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
