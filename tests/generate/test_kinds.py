"""Adding an engine or a backend kind is its module, its conf file and its tests
(vbw/generate/engines/__init__.py, vbw/generate/backend.py and vbw/generate/providers.py
say so): here each is added as one module of a package vbw has never heard of (an
installed distribution in a temporary folder, found through its entry points) and one
conf file in a folder Hydra's search path names, without a file of vbw, and runs. An
engine dropped into vbw's own engines package needs no more: tests/test_registry.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_vbw

ECHO_BACKEND = """
    import time
    from typing import Any, ClassVar, Literal
    from vbw.config import BackendSettings
    from vbw.generate.backend import Backend, Generation
    from vbw.generate.canary import CANARY_EXPECTED, CANARY_SCHEMA
    from vbw.generate.model import ModelFile
    from vbw.generate.providers import Opened, Provider
    from vbw.replay import ModelInfo
    import json

    class EchoConfig(BackendSettings):
        provider: ClassVar[str] = "zoo_kinds:EchoProvider"
        name: Literal["echo"]
        answer: str = "Answer: 42"

    class Echo(Backend):
        engine = "echo"

        def __init__(self, answer):
            self.answer = answer

        def compile(self, schema):
            return 0.0

        def generate(self, messages, config):
            # a toy "constraint": the schema's const object, the canary's among them
            text = json.dumps(CANARY_EXPECTED) if config.schema_ == CANARY_SCHEMA else (
                json.dumps({"answer": 42}) if config.schema_ else self.answer)
            return Generation(text=text, n_tokens=1, seconds=0.0, ttft_seconds=None,
                              finish_reason="stop")

    class EchoProvider(Provider):
        def prepare(self, backend, model):
            return ModelFile(path="/echo", sha256="0" * 64, source="path", file="echo")

        def planned(self, backend, model, engine, mf):
            # a served model: the header's backend block names this kind
            return {"engine": "echo", "decoding": {"strategy": "echo"},
                    "model": ModelInfo(name="echo", source="echo://local"),
                    "backend": {"name": backend.name, "base_url": "echo://local",
                                "model": "echo", "dialect": "echo"}}

        def open(self, backend, model, engine, mf, threads):
            return Opened(Echo(backend.answer), 0.0)
"""

ENGINE = """
    from vbw.generate.engines.outlines import OutlinesEngine

    class ZooOutlines(OutlinesEngine):
        name = "zoo_outlines"
        requires = ("outlines-core", "zoo-kinds")
"""


def _site(root: Path) -> Path:
    """A distribution `zoo-kinds` with one module per kind and their entry points,
    installed under `root/site`, and a config folder with the kinds' conf files."""
    site = root / "site"
    site.mkdir()
    (site / "zoo_kinds.py").write_text(textwrap.dedent(ECHO_BACKEND))
    (site / "zoo_engine.py").write_text(textwrap.dedent(ENGINE))
    info = site / "zoo_kinds-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zoo-kinds\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vbw.backends]\necho = zoo_kinds:EchoConfig\n\n"
                                           "[vbw.engines]\nzoo_outlines = zoo_engine:ZooOutlines\n")
    conf = root / "conf"
    (conf / "backend").mkdir(parents=True)
    (conf / "backend" / "echo.yaml").write_text("name: echo\nanswer: 'Answer: 42'\n")
    (conf / "engine").mkdir()
    (conf / "engine" / "zoo_outlines.yaml").write_text(
        (ROOT / "conf" / "engine" / "outlines.yaml").read_text().replace("name: outlines",
                                                                         "name: zoo_outlines"))
    return site


def _vbw(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_vbw(f"hydra.searchpath=[file://{root / 'conf'}]", *args, cwd=root,
                   pythonpath=(root / "site",), timeout=600)


def test_a_new_backend_kind_runs_a_live_job(tmp_path: Path) -> None:
    _site(tmp_path)
    proc = _vbw(tmp_path, "task=gsm8k", "n=2", "mode=live", "backend=echo",
                f"hydra.run.dir={tmp_path}/out")
    assert proc.returncode == 0, proc.stderr
    assert "engine echo, canary passed" in proc.stderr
    replay = (tmp_path / "out" / "replay.jsonl").read_text().splitlines()
    meta = json.loads(replay[0])["meta"]
    assert meta["engine"] == "echo" and len(replay) == 4
    assert meta["backend"] == {"name": "echo", "base_url": "echo://local", "model": "echo",
                               "dialect": "echo"}  # its own header block, by its own name
    assert set(meta["versions"]) == {"vbw", "jsonschema", "hydra-core", "pydantic"}
    first = json.loads(replay[1])["arms"]
    assert first["unconstrained"]["text"] == "Answer: 42"
    assert first["constrained[answer]"]["text"] == '{"answer": 42}'
    # read back where the kind is not installed: any kind's name is a valid header
    proc = run_vbw("task=gsm8k", "mode=replay", f"replay={tmp_path}/out/replay.jsonl",
                   f"hydra.run.dir={tmp_path}/rescored", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "rescored" / "report.json").read_text())
    assert report["arms"]["unconstrained"]["n"] == 2


def test_a_new_engine_is_known_by_name_without_a_file_of_vbw(tmp_path: Path) -> None:
    site = _site(tmp_path)
    code = ("from vbw.generate.engines import ENGINES; c = ENGINES.get('zoo_outlines'); "
            "print(c.__name__, ENGINES.kinds)")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "ZooOutlines ('outlines', 'llamacpp', 'llguidance', 'zoo_outlines')"


@pytest.mark.live
def test_a_new_engine_runs_live_on_the_real_model(tmp_path: Path) -> None:
    """The engine from the temporary package, through the canary and one GSM8K item on
    SmolLM2 (its conf file is the only other thing it needs); its own packages join the
    header's versions. One constrained arm on the small answer schema, 16 tokens: the
    run, not the answer, is tested."""
    pytest.importorskip("llama_cpp")
    from tests.generate.conftest import THREADS

    _site(tmp_path)
    threads = [f"threads={THREADS}"] if THREADS else []
    proc = _vbw(tmp_path, "task=gsm8k", "n=1", "mode=live", "model=smollm2_135m",
                "engine=zoo_outlines", "arms.kinds=[constrained]", "arms.schemas=[answer]",
                "arms.max_tokens.json=16",
                *threads, f"hydra.run.dir={tmp_path}/out")
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "out" / "replay.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])["meta"]
    assert meta["engine"] == "zoo_outlines" and meta["canary_seconds"]["zoo_outlines"] > 0
    assert meta["versions"]["zoo-kinds"] == "1.0" and "llguidance" not in meta["versions"]
    assert {"llama-cpp-python", "outlines-core"} <= set(meta["versions"])
    assert list(json.loads(lines[1])["arms"]) == ["constrained[answer]"]


@pytest.mark.parametrize("mode", ["live", "replay"])
def test_an_unknown_engine_is_refused_before_any_work(tmp_path: Path, mode: str) -> None:
    """At the front door, whatever the mode: no model is looked for, no replay read; the
    line lists the installed package's engine too."""
    _site(tmp_path)
    proc = _vbw(tmp_path, "task=demo", "n=1", f"mode={mode}", "model=qwen2_5_0_5b",
                "engine=outlines", "engine.name=outlnes", f"hydra.run.dir={tmp_path}/out")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "vbw: error: config: engine.name: unknown engine kind 'outlnes'; did you mean "
        "'outlines'? valid: outlines, llamacpp, llguidance, zoo_outlines"]
