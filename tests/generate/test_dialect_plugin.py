"""A server dialect from an installed package's entry point (group `vbw.dialects`): the
example plugin's `vllm_guided` (examples/plugin/src/vbw_canned/dialect.py), installed as
a distribution of its own, runs a whole live job against the scripted server
(tests/generate/standin.EchoServer) reading the schema where that dialect puts it; and a
misspelt dialect is one line, exit 2, that lists it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.conftest import ROOT, one_line_error, run_vbw
from tests.generate.standin import EchoServer

PLUGIN_SRC = ROOT / "examples" / "plugin" / "src"
CAPS = ["arms.max_tokens.free=40", "arms.max_tokens.json=40", "arms.max_tokens.package=40"]


def _site(root: Path) -> dict[str, str]:
    """A distribution whose one entry point names the example's dialect class; the
    environment that has it installed."""
    info = root / "site" / "guided_dialect-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: guided-dialect\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[vbw.dialects]\nvllm_guided = vbw_canned.dialect:GuidedVllm\n")
    return {"PYTHONPATH": os.pathsep.join(map(str, (ROOT, root / "site", PLUGIN_SRC)))}


def _server(srv: EchoServer, dialect: str) -> list[str]:
    return ["task=gsm8k", "mode=live", "n=2", "backend=openai",
            f"backend.base_url={srv.base_url}", "backend.model=m",
            f"backend.dialect={dialect}", "backend.max_retries=0", *CAPS]


def test_a_dialect_from_an_entry_point_runs_a_live_job(tmp_path: Path) -> None:
    env = _site(tmp_path)
    with EchoServer(schema_of=lambda req: req.get("guided_json")) as srv:
        proc = run_vbw(*_server(srv, "vllm_guided"), f"hydra.run.dir={tmp_path}/o",
                       cwd=tmp_path, env=env, timeout=300)
        posts = [p["body"] for p in srv.posts]
    assert proc.returncode == 0, proc.stderr
    assert "engine server-vllm_guided, canary passed" in proc.stderr
    # the plugin's schema field, and the sampler pin it inherits from vbw's `vllm`
    constrained = [b for b in posts if "guided_json" in b]
    assert constrained and all("response_format" not in b and "structured_outputs" not in b
                               for b in posts)
    assert all(b["repetition_penalty"] == 1.0 and "logprobs" not in b for b in posts)
    lines = (tmp_path / "o" / "replay.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])["meta"]
    assert meta["engine"] == "server-vllm_guided" and meta["backend"]["dialect"] == "vllm_guided"
    assert meta["decoding"]["repetition_penalty"] == 1.0
    arms = json.loads(lines[1])["arms"]
    assert arms["constrained[answer]"]["text"].startswith('{"')  # the echoed object: bound
    assert len(lines) == 4 and "end" in json.loads(lines[-1])  # header, 2 items, end


def test_a_misspelt_dialect_is_one_line_that_lists_the_installed_ones(tmp_path: Path) -> None:
    env = _site(tmp_path)
    with EchoServer() as srv:
        proc = run_vbw(*_server(srv, "vllm_guidd"), f"hydra.run.dir={tmp_path}/o",
                       cwd=tmp_path, env=env, timeout=300)
        posts = srv.posts
    line = one_line_error(proc)
    assert line == ("vbw: error: config: backend.dialect: unknown dialect kind 'vllm_guidd'; "
                    "did you mean 'vllm_guided'? valid: openai, vllm, llama_server, "
                    "llama_cpp_python, ollama, vllm_guided")
    assert posts == []  # refused before any request


def test_the_plugin_page_shows_the_example_dialect_as_it_is() -> None:
    """docs/reference/plugins.md quotes the example's class and entry point: every line it
    shows is a line of the example."""
    page = (ROOT / "docs" / "reference" / "plugins.md").read_text(encoding="utf-8")
    section = page.split("## A server dialect", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]
    toml = re.search(r"```toml\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]
    source = (PLUGIN_SRC / "vbw_canned" / "dialect.py").read_text(encoding="utf-8").splitlines()
    project = (ROOT / "examples" / "plugin" / "pyproject.toml").read_text().splitlines()
    assert [x for x in code.splitlines() if x.strip() and x not in source] == []
    assert [x for x in toml.splitlines() if x.strip() and x not in project] == []
