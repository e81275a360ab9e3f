"""vbw-canned's `vllm_guided` dialect against an installed vbw: a live job through
`backend=openai` against a small scripted server that, like a vLLM before v0.12, binds a
schema sent as `guided_json` (and only there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
TASK = ("--config-dir", str(HERE), "task=sums")


def _answer(request: dict[str, Any]) -> str:
    """The canary's object under the canary's schema, `{"value": 15}` under any other
    schema sent as `guided_json`, free text otherwise."""
    from vbw.generate.canary import CANARY_EXPECTED, CANARY_SCHEMA

    schema = request.get("guided_json")
    if schema == CANARY_SCHEMA:
        return json.dumps(CANARY_EXPECTED)
    return '{"value": 15}' if schema is not None else "Answer: 15"


class _Handler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(request)
        body = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": _answer(request)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (the header's probes: nothing to tell)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_guided_dialect_runs_a_live_job(server: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "vbw", *TASK, "mode=live", "backend=openai",
                           f"backend.base_url={server}", "backend.model=m",
                           "backend.dialect=vllm_guided", "backend.stream=false",
                           f"hydra.run.dir={tmp_path}/run"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "engine server-vllm_guided, canary passed" in proc.stderr
    assert any("guided_json" in r for r in _Handler.seen)
    assert not any("structured_outputs" in r or "response_format" in r for r in _Handler.seen)
    meta = json.loads((tmp_path / "run/replay.jsonl").read_text().splitlines()[0])["meta"]
    assert meta["engine"] == "server-vllm_guided" and meta["decoding"]["repetition_penalty"] == 1.0
