"""Whole live runs through a real OpenAI-compatible server (llama-cpp-python's, on
SmolLM2, started by the `llama_server` fixture): the canary per dialect, replays that
re-score to the same report, concurrency, a server dying mid-run, and the API key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import load_json, run_vbw
from tests.generate.conftest import kill_server_after_first_item

pytestmark = pytest.mark.live

# every run compares texts (complete or cut) or outcomes: short caps keep them quick
CAPS = ["arms.max_tokens.free=40", "arms.max_tokens.json=40", "arms.max_tokens.package=40"]


def _server(srv, dialect: str = "llama_cpp_python", *extra: str) -> list[str]:
    return ["backend=openai", f"backend.base_url={srv.base_url}", f"backend.model={srv.model}",
            f"backend.dialect={dialect}", "backend.max_retries=1", *CAPS, *extra]


def _texts(replay: Path) -> dict[str, dict[str, str]]:
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: {k: a["text"] for k, a in r["arms"].items()} for r in lines
            if "id" in r}


def _one_line(proc) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("vbw: error:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_canary_refuses_a_dialect_the_server_ignores(llama_server, tmp_path: Path) -> None:
    line = _one_line(run_vbw("task=gsm8k", "mode=live", "n=1",
                             *_server(llama_server, "vllm"),
                             f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=300))
    assert "canary failed on engine server-vllm" in line and "not binding" in line


@pytest.mark.parametrize("task", ["bfcl_simple", "gsm8k"])
def test_three_items_through_the_server_rescore_to_the_same_report(
        llama_server, tmp_path: Path, task: str) -> None:
    live = run_vbw(f"task={task}", "mode=live", "n=3", *_server(llama_server),
                   f"hydra.run.dir={tmp_path}/live", cwd=tmp_path, timeout=600)
    assert live.returncode == 0, live.stderr
    replay = tmp_path / "live/replay.jsonl"
    head = json.loads(replay.read_text().splitlines()[0])["meta"]
    assert head["engine"] == "server-llama_cpp_python"
    assert head["backend"]["dialect"] == "llama_cpp_python" and head["backend"]["name"] == "openai"
    assert head["backend"]["base_url"] == llama_server.base_url
    again = run_vbw(f"task={task}", f"replay={replay}", "n=3", f"hydra.run.dir={tmp_path}/re",
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    a, b = load_json(tmp_path / "live/report.json"), load_json(tmp_path / "re/report.json")
    assert a["arms"] == b["arms"] and a["ledger"] == b["ledger"] and a["n"] == 3


def _texts_at(srv, tmp_path: Path, concurrency: int, n: int) -> dict[str, dict[str, str]]:
    """The texts of an n-item BFCL live run through `srv` at this concurrency."""
    proc = run_vbw("task=bfcl_simple", "mode=live", f"n={n}",
                   *_server(srv, "llama_cpp_python", f"backend.concurrency={concurrency}"),
                   f"hydra.run.dir={tmp_path}/c{concurrency}", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return _texts(tmp_path / f"c{concurrency}/replay.jsonl")


def test_concurrency_one_and_three_give_identical_texts(llama_server, tmp_path: Path) -> None:
    one, three = _texts_at(llama_server, tmp_path, 1, 2), _texts_at(llama_server, tmp_path, 3, 2)
    assert one == three and len(one) == 2


def test_concurrency_on_a_server_started_with_its_defaults(smollm2_file, tmp_path: Path) -> None:
    """`python -m llama_cpp.server --model M` as is: it cuts a stream short when another
    request arrives; vbw asks such a request again unstreamed, so concurrency 3 works
    there too and gives the texts of concurrency 1."""
    from tests.generate.conftest import LlamaServer

    server = LlamaServer(Path(smollm2_file.path), tmp_path / "server.log",
                         interrupt_requests=True)
    server.start()
    try:
        server.model = server.model or "smollm2"
        # two items: their requests overlap (and cut each other short) as three would
        one, three = _texts_at(server, tmp_path, 1, 2), _texts_at(server, tmp_path, 3, 2)
    finally:
        server.stop()
    assert one == three and len(one) == 2


def test_server_killed_mid_run_then_resumed(llama_server, tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    args = ["task=gsm8k", "mode=live", "n=4", *_server(llama_server), f"replay={replay}"]
    proc = kill_server_after_first_item(llama_server, args, replay, tmp_path / "a",
                                        timeout=300)
    err = proc.stderr
    assert proc.returncode == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("vbw: error:")]
    assert len(errors) == 1 and "Traceback" not in err and "resume=true" in errors[0]
    done = _texts(replay)
    assert 1 <= len(done) < 4
    assert all(all(t is not None for t in arms.values()) for arms in done.values())
    llama_server.start()
    resumed = run_vbw(*args, "resume=true", f"hydra.run.dir={tmp_path}/b", cwd=tmp_path,
                      timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    full = _texts(replay)
    assert list(full) == [f"gsm8k_test_{i}" for i in range(4)]
    assert all(full[i] == done[i] for i in done)  # the finished items were kept as they were


def test_api_key_appears_in_no_file_the_run_writes(llama_server, tmp_path: Path) -> None:
    secret = "sk-vbw-test-7d1e0c9b5a"
    env = {"VBW_TEST_KEY": secret}
    proc = run_vbw("task=bfcl_simple", "mode=live", "n=1",
                   *_server(llama_server, "llama_cpp_python", "backend.api_key_env=VBW_TEST_KEY"),
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    written = [p for p in (tmp_path / "o").rglob("*") if p.is_file()]
    assert any(p.name == "replay.jsonl" for p in written)
    for p in written:
        assert secret.encode() not in p.read_bytes(), p
    cfg = run_vbw("--cfg", "job", *_server(llama_server, "llama_cpp_python",
                                            "backend.api_key_env=VBW_TEST_KEY"),
                  cwd=tmp_path, env=env)
    assert secret not in cfg.stdout and "VBW_TEST_KEY" in cfg.stdout
    assert os.environ.get("VBW_TEST_KEY") is None  # the test set it only for the child


def _samples(replay: Path) -> dict[str, list[dict[str, str]]]:
    """Per item, every sample's text per arm."""
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: [{k: a["text"] for k, a in arms.items()}
                      for arms in [r["arms"], *r.get("samples", [])]]
            for r in lines if "id" in r}


def test_a_sampled_run_is_reproduced_by_a_server_that_honours_seeds(
        llama_server, tmp_path: Path) -> None:
    """llama-cpp-python's server takes each request's seed: a run of k = 2 samples and the
    same run in two shards merged agree on every sample, and another decoding.seed draws
    other texts."""
    sampled = ["task=bfcl_simple", "mode=live", "n=2", "decoding.temperature=0.9",
               "decoding.samples=2", "arms=headline", "outputs=[json]",
               *(x for x in _server(llama_server) if not x.startswith("arms.max_tokens")),
               "arms.max_tokens.free=16", "arms.max_tokens.json=24",
               "arms.max_tokens.package=24"]
    got = {}
    for name, seed in (("a", 5), ("c", 6)):
        proc = run_vbw(*sampled, f"decoding.seed={seed}", f"hydra.run.dir={tmp_path}/{name}",
                       cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr
        got[name] = _samples(tmp_path / f"{name}/replay.jsonl")
    for i in range(2):
        proc = run_vbw(*sampled, "decoding.seed=5", "shard.count=2", f"shard.index={i}",
                       f"replay={tmp_path}/s{i}.jsonl", f"hydra.run.dir={tmp_path}/s{i}",
                       cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr
    merged = run_vbw("mode=merge", "task=bfcl_simple", "arms=headline", "outputs=[json]",
                     f"replays=[{tmp_path}/s0.jsonl,{tmp_path}/s1.jsonl]",
                     f"hydra.run.dir={tmp_path}/m", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    got["b"] = _samples(tmp_path / "m/replay.jsonl")
    assert got["a"] == got["b"] and got["a"] != got["c"]
    assert all(len(samples) == 2 for samples in got["a"].values())
    meta = json.loads((tmp_path / "a/replay.jsonl").read_text().splitlines()[0])["meta"]
    assert meta["format"] == "vbw-replay/2" and meta["decoding"]["samples"] == 2
    assert meta["decoding"]["strategy"] == "sample" and meta["decoding"]["seed"] == 5
    assert meta["decoding"]["top_k"] == 0 and meta["decoding"]["min_p"] == 0.0
    assert meta["backend"]["seed"] == "honoured"  # the probe at the start
