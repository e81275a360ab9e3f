"""A crash of the native generation stack ends a live run in one line (exit 2) naming the
step, the signal and its likely cause; the replay keeps the finished items and
`resume=true` completes it. On the real SmolLM2 and llama.cpp: an engine that faults on
purpose (a real invalid read inside a constraint), and, on a CPU with AMX, llama.cpp's
own repacking crash (`model.repack=on`) against `auto`."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_vbw
from tests.generate.conftest import THREADS
from vbw.generate.repack import crash_flag

pytestmark = pytest.mark.live

FAST = ["model=smollm2_135m", "task=gsm8k", "n=2", "progress=off", "mode=live",
        "batch.sequences=1",  # one item at a time: the second item's arm is the one to crash
        "arms.kinds=[unconstrained,constrained]", "arms.max_tokens.free=16",
        "arms.max_tokens.json=16", "arms.max_tokens.package=16",
        *([f"threads={THREADS}"] if THREADS else [])]

# An engine that faults inside its token rule once the replay holds one finished item (so
# the canary and the first item pass, and the second item's constrained arm crashes)
FAULTY = """
    import ctypes, os
    from vbw.generate.engines.gbnf import LlamaCppEngine

    def _fault_now():
        path = os.environ.get("FAULTY_REPLAY")
        if path and os.path.exists(path):
            with open(path) as f:
                return sum(1 for _ in f) >= 2
        return False

    class Faulty(LlamaCppEngine):
        name = "faulty"

        def _compile(self, schema, key):
            inner = super()._compile(schema, key)

            class Wrapped:
                def rule(self):
                    if _fault_now():
                        ctypes.string_at(0)  # SIGSEGV, as a native bug makes one
                    return inner.rule()
            return Wrapped()
"""


def _plugin(root: Path) -> dict[str, str]:
    """The engine `faulty` as an installed package would add it; the env to run it."""
    site = root / "site"
    info = site / "faulty_engine-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "faulty_engine.py").write_text(textwrap.dedent(FAULTY))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: faulty-engine\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vbw.engines]\nfaulty = faulty_engine:Faulty\n")
    conf = root / "conf" / "engine"
    conf.mkdir(parents=True)
    (conf / "faulty.yaml").write_text(
        (ROOT / "conf/engine/llamacpp.yaml").read_text().replace("name: llamacpp", "name: faulty"))
    return {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_a_native_crash_is_one_line_and_resume_completes(smollm2_file, tmp_path: Path) -> None:
    env = _plugin(tmp_path)
    replay = tmp_path / "replay.jsonl"
    args = [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "engine=faulty", *FAST,
            f"replay={replay}"]
    crashed = run_vbw(*args, f"hydra.run.dir={tmp_path}/a", cwd=tmp_path,
                      env={**env, "FAULTY_REPLAY": str(replay)}, timeout=600)
    assert crashed.returncode == 2, crashed.stderr
    errors = crashed.stderr.strip().splitlines()
    assert [ln for ln in errors if ln.startswith("vbw: error:")] == errors[-1:]
    assert "Traceback" not in crashed.stderr
    line = errors[-1]
    assert "the native generation stack crashed with SIGSEGV" in line, line
    assert "while generating item gsm8k_test_1, arm constrained[" in line, line
    assert f"{replay} keeps the finished items; resume=true continues" in line, line
    log = next((tmp_path / "a").rglob("native.log"))
    assert f"its messages are in {log}" in line
    assert "Fatal Python error: Segmentation fault" in log.read_text()
    kept = _lines(replay)
    assert [r.get("id") for r in kept[1:]] == ["gsm8k_test_0"]  # the first item, whole
    resumed = run_vbw(*args, "resume=true", f"hydra.run.dir={tmp_path}/b", cwd=tmp_path,
                      env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    done = _lines(replay)
    assert [r.get("id") for r in done[1:-1]] == ["gsm8k_test_0", "gsm8k_test_1"]
    assert "end" in done[-1]
    assert json.loads((tmp_path / "b/report.json").read_text())["n"] == 2
    assert not list((tmp_path / "b").rglob("native.log"))  # empty: removed


@pytest.mark.parametrize("engine", ["outlines", "llamacpp", "llguidance"])
def test_every_in_process_engine_runs_with_the_default_repack(smollm2_file, tmp_path: Path,
                                                              engine: str) -> None:
    """On any CPU (an AMX one included), `auto` runs; the header says what it used."""
    proc = run_vbw(*FAST, f"engine={engine}", "n=1", f"hydra.run.dir={tmp_path}/run",
                   cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    meta = _lines(tmp_path / "run/replay.jsonl")[0]["meta"]
    assert meta["repack"] is (crash_flag() is None)
    report = (tmp_path / "run/report.md").read_text()
    assert f"repack {'on' if meta['repack'] else 'off'}" in report


def test_repacking_on_an_amx_cpu_is_one_line_naming_the_setting(smollm2_file,
                                                                tmp_path: Path) -> None:
    """Where the CPU has AMX, llama.cpp's own crash is contained; elsewhere `on` runs."""
    proc = run_vbw(*FAST, "n=1", "model.repack=on", f"hydra.run.dir={tmp_path}/run",
                   cwd=tmp_path, timeout=600)
    if crash_flag() is None:
        assert proc.returncode == 0, proc.stderr
        assert _lines(tmp_path / "run/replay.jsonl")[0]["meta"]["repack"] is True
        return
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    line = lines[0]
    assert "crashed with SIGSEGV" in line and "while running the canary" in line, line
    assert f"weight repacking on a CPU with {crash_flag()}" in line, line
    assert "run with model.repack=off" in line and "no item was written" in line, line


def test_a_runtime_built_without_the_setting_decides_as_auto(runtime) -> None:
    """Tests and benchmarks build `Runtime` directly: they get `auto` too, and decode."""
    assert runtime.repack is (crash_flag() is None)
    assert runtime.complete(runtime.chat_tokens("Say hi."), max_tokens=2).n_tokens >= 1
