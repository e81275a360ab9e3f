"""Sampled live runs end to end on SmolLM2, for every in-process engine: with k = 2
samples per item (a vbw-replay/2 replay), the same seed gives the same replay after
SIGKILL + resume and after shards + merge as one uninterrupted run; the header records
the sampler; the tax is recorded per arm and sample. At temperature 0, k = 3 samples are
each the greedy run's answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import run_vbw, start_vbw
from tests.generate.conftest import HAVE_LLAMA, LIVE_REASON, THREADS

pytestmark = [pytest.mark.live,
              pytest.mark.skipif(not HAVE_LLAMA, reason=LIVE_REASON)]

# the headline arms (prompt_json, constrained) and short caps keep 9 runs of k = 2 quick
SAMPLED = ["model=smollm2_135m", "task=bfcl_simple", "progress=off", "n=3", "arms=headline",
           "batch.sequences=1",  # one item at a time: a kill lands between items
           "decoding.temperature=0.8", "decoding.seed=7", "decoding.samples=2", "outputs=[json]",
           "arms.max_tokens.free=16", "arms.max_tokens.json=24", "arms.max_tokens.package=24",
           *([f"threads={THREADS}"] if THREADS else [])]
TIMINGS = {"seconds", "ttft_seconds", "compile_seconds"}


def _generated(path: Path) -> dict[str, list[dict[str, dict]]]:
    """Per item, per sample and arm, everything the replay line records but timings."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["id"]: [{k: {f: v for f, v in a.items() if f not in TIMINGS}
                       for k, a in arms.items()} for arms in [r["arms"], *r.get("samples", [])]]
            for r in lines[1:] if "id" in r}


@pytest.fixture(scope="module", params=["outlines", "llamacpp", "llguidance"])
def sampled_run(request, tmp_path_factory) -> tuple[str, Path]:
    out = tmp_path_factory.mktemp(f"sampled-{request.param}")
    proc = run_vbw("mode=live", *SAMPLED, f"engine={request.param}",
                   f"hydra.run.dir={out}", cwd=out, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return request.param, out / "replay.jsonl"


def test_the_header_records_the_sampler_and_arms_their_tax(sampled_run) -> None:
    engine, replay = sampled_run
    meta = json.loads(replay.read_text().splitlines()[0])["meta"]
    dec = meta["decoding"]
    assert (dec["strategy"], dec["temp"], dec["seed"]) == ("sample", 0.8, 7)
    assert dec["chain"].startswith("mask,top_k,top_p,min_p,temperature")
    assert (meta["format"], dec["samples"]) == ("vbw-replay/2", 2)
    got = _generated(replay)
    assert len(got) == 3
    for samples in got.values():
        assert len(samples) == 2
        for arms in samples:
            assert list(arms) == ["prompt_json[arguments]", "constrained[arguments]"]
            assert "tax" not in arms["prompt_json[arguments]"]  # no grammar, no tax
            assert arms["constrained[arguments]"]["tax"] > 0  # BFCL's grammar takes mass away
    # two samples at T = 0.8 are not one text twice: some arm of some item differs
    assert any(s[0][k]["text"] != s[1][k]["text"] for s in got.values() for k in s[0])


def test_sigkill_then_resume_gives_the_same_samples(sampled_run, tmp_path: Path) -> None:
    engine, full = sampled_run
    replay = tmp_path / "r.jsonl"
    args = ["mode=live", *SAMPLED, f"engine={engine}", f"replay={replay}"]
    proc = start_vbw(*args, f"hydra.run.dir={tmp_path}/a", cwd=tmp_path,
                     output=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline and not (replay.is_file() and _generated(replay)):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 1 <= len(_generated(replay)) < 3, "the kill should land mid-run"
    resumed = run_vbw(*args, "resume=true", f"hydra.run.dir={tmp_path}/b", cwd=tmp_path,
                      timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    assert _generated(replay) == _generated(full)


def test_shards_then_merge_give_the_same_samples(sampled_run, tmp_path: Path) -> None:
    engine, full = sampled_run
    for i in range(2):
        proc = run_vbw("mode=live", *SAMPLED, f"engine={engine}", "shard.count=2",
                       f"shard.index={i}", f"replay={tmp_path}/s{i}.jsonl",
                       f"hydra.run.dir={tmp_path}/s{i}", cwd=tmp_path, timeout=900)
        assert proc.returncode == 0, proc.stderr
    merged = run_vbw("mode=merge", "task=bfcl_simple", "arms=headline", "outputs=[json]",
                     f"replays=[{tmp_path}/s0.jsonl,{tmp_path}/s1.jsonl]",
                     f"hydra.run.dir={tmp_path}/m", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert _generated(tmp_path / "m" / "replay.jsonl") == _generated(full)


GREEDY = ["model=smollm2_135m", "task=bfcl_simple", "progress=off", "n=1", "outputs=[json]",
          "arms=headline",
          "arms.max_tokens.free=12", "arms.max_tokens.json=24", "arms.max_tokens.package=24",
          *([f"threads={THREADS}"] if THREADS else [])]


@pytest.mark.parametrize("engine", ["outlines", "llamacpp", "llguidance"])
def test_k_samples_at_temperature_0_are_each_the_greedy_answer(engine: str,
                                                                tmp_path: Path) -> None:
    runs = {}
    for name, extra in (("greedy", []), ("k3", ["decoding.samples=3"])):
        proc = run_vbw("mode=live", *GREEDY, *extra, f"engine={engine}",
                       f"replay={tmp_path}/{name}.jsonl", f"hydra.run.dir={tmp_path}/{name}",
                       cwd=tmp_path, timeout=900)
        assert proc.returncode == 0, proc.stderr
        runs[name] = _generated(tmp_path / f"{name}.jsonl")
    assert "every sample is the greedy answer" in proc.stderr
    assert runs["greedy"].keys() == runs["k3"].keys() and len(runs["k3"]) == 1
    for item, samples in runs["k3"].items():
        assert len(samples) == 3
        assert all(s == runs["greedy"][item][0] for s in samples)
