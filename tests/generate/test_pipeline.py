"""Generation logic on the scripted fake backend (no model, milliseconds): the arm order,
compile-time attribution, unsupported schemas, failures that record nothing, resumption,
concurrency, and a whole `app.run` in-process. The real-model tests stay beside these."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from tests.conftest import TASK_CONF
from tests.generate.scripted import ScriptedBackend, scripted
from tests.modes.test_merge import cfg
from tests.report.test_html import embedded
from vbw.cli.job import run
from vbw.config import DecodingConfig, MaxTokens, RunConfig
from vbw.errors import EngineError, ReplayError
from vbw.generate.items import generate_item
from vbw.generate.live import in_order
from vbw.generate.sampling import request_sampling
from vbw.replay import read_replay
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

GSM8K = load_task(TASK_CONF / "gsm8k.yaml")
CAPS = MaxTokens(free=11, json=22, package=33)


def _cfg(tmp: Path, **extra: object) -> RunConfig:
    """test_merge's live config of the scripted run, over 3 items unless `extra` says."""
    return cfg(**{"n": 3, **extra})


def test_arm_order_messages_and_caps() -> None:
    item = GSM8K.items(1)[0]
    arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    backend = ScriptedBackend(engine="outlines")
    rec = generate_item(GSM8K, item, arms, backend, CAPS)
    calls = [(len(m), c.max_tokens, c.schema_ is not None) for m, c in backend.calls]
    # unconstrained; reason_then_constrain extends it (3 messages, package cap, schema);
    # then prompt_json and constrained per schema (same prompt, json cap)
    assert calls == [(1, 11, False), (3, 33, True), (1, 22, False), (1, 22, True),
                     (1, 22, False), (1, 22, True)]
    assert backend.calls[1][0][1]["content"] == rec.arms["unconstrained"].text
    assert backend.calls[2][0] == backend.calls[3][0]  # prompt_json and constrained alike
    assert list(rec.arms) == [a.key for a in arms]
    assert rec.arms["reason_then_constrain[answer]"].reuses == "unconstrained"


class _Batching(ScriptedBackend):
    """A backend that decodes several completions at once: it records the caps of each
    generate_many call, and the free text's call waits until the other arms' has started
    (were they queued behind the free text, it would time out)."""

    sequences = 4

    def __init__(self) -> None:
        super().__init__(engine="outlines")
        self.batches: list[list[int]] = []
        self.others_started = threading.Event()
        self.waited: list[bool] = []

    def generate_many(self, requests):  # type: ignore[no-untyped-def]
        caps = [c.max_tokens for _, c in requests]
        with self._lock:
            self.batches.append(caps)
        if CAPS.json_ in caps:
            self.others_started.set()
        if CAPS.free in caps:
            self.waited.append(self.others_started.wait(timeout=10))
        return super().generate_many(requests)


def test_a_batching_backend_starts_the_other_arms_with_the_free_text() -> None:
    """On a backend that decodes several at once, prompt_json and constrained (which do
    not read the free text) start beside the free text, and reason_then_constrain as soon
    as the free text ends (its prompt extends it); the records are the one-by-one run's."""
    item = GSM8K.items(1)[0]
    arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    backend = _Batching()
    rec = generate_item(GSM8K, item, arms, backend, CAPS)
    assert backend.waited == [True]
    assert sorted(backend.batches) == [[11], [22, 22, 22, 22], [33]]
    assert backend.batches.index([33]) > backend.batches.index([11])
    alone = generate_item(GSM8K, item, arms, ScriptedBackend(engine="outlines"), CAPS)
    assert rec.arms == alone.arms and list(rec.arms) == [a.key for a in arms]


def test_compile_time_goes_to_the_first_user_of_a_schema() -> None:
    item = GSM8K.items(1)[0]
    backend = ScriptedBackend(engine="outlines", compile_seconds=0.25)
    all_arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    rec = generate_item(GSM8K, item, all_arms, backend, CAPS)
    charged = {k: a.compile_seconds for k, a in rec.arms.items() if a.compile_seconds}
    assert charged == {"constrained[answer]": 0.25, "constrained[reasoning]": 0.25}
    no_constrained = task_arms(GSM8K.schema_names, "answer",
                               ["unconstrained", "reason_then_constrain"])
    rec = generate_item(GSM8K, item, no_constrained, ScriptedBackend(compile_seconds=0.5), CAPS)
    assert rec.arms["reason_then_constrain[answer]"].compile_seconds == 0.5


def test_k_samples_run_every_arm_k_times_with_their_own_seeds() -> None:
    item = GSM8K.items(1)[0]
    arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    backend = ScriptedBackend(engine="outlines", compile_seconds=0.25)
    dec = DecodingConfig(temperature=0.7, samples=3)
    rec = generate_item(GSM8K, item, arms, backend, CAPS, decoding=dec)
    assert len(backend.calls) == 3 * 6 and len(rec.samples) == 2
    assert all(list(s) == [a.key for a in arms] for s in rec.samples)
    seeds = [c.sampling.seed for _, c in backend.calls]
    assert len(set(seeds)) == 3 * 6  # one seed per arm and sample
    want = [request_sampling(dec, item.id, "unconstrained", i).seed for i in range(3)]
    # arm by arm, an arm's samples one after another (its prompt cached once for all)
    assert seeds[:3] == want
    assert [len(m) for m, _ in backend.calls[3:6]] == [3, 3, 3]
    assert backend.calls[6][0] == backend.calls[7][0] == backend.calls[8][0]
    # sample i's reason_then_constrain extends sample i's unconstrained text
    assert [backend.calls[3 + i][0][1]["content"] for i in range(3)] == \
        [s["unconstrained"].text for s in [rec.arms, *rec.samples]]
    charged = [k for s in [rec.arms, *rec.samples] for k, a in s.items() if a.compile_seconds]
    assert charged == ["constrained[answer]", "constrained[reasoning]"]  # the first sample's


def test_an_unsupported_item_says_so_in_every_sample() -> None:
    item = GSM8K.items(1)[0]
    arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    backend = ScriptedBackend(unsupported=[item.schemas["reasoning"]])
    rec = generate_item(GSM8K, item, arms, backend, CAPS, decoding=DecodingConfig(samples=2))
    assert backend.calls == [] and len(rec.samples) == 1
    assert "refused" in rec.samples[0]["constrained[reasoning]"].unsupported_schema


def test_unsupported_schema_is_recorded_not_generated() -> None:
    item = GSM8K.items(1)[0]
    arms = task_arms(GSM8K.schema_names, "answer", list(ARM_KINDS))
    backend = ScriptedBackend(unsupported=[item.schemas["reasoning"]])
    rec = generate_item(GSM8K, item, arms, backend, CAPS)
    assert backend.calls == []  # nothing generated around it
    assert "refused" in rec.arms["constrained[reasoning]"].unsupported_schema
    assert rec.arms["constrained[answer]"].unsupported_schema is None
    assert rec.unsupported and all(a.text is None for a in rec.arms.values())


def test_in_order_keeps_item_order_and_stops_at_a_failure() -> None:
    items = GSM8K.items(6)

    def make(item):
        if item.id == "gsm8k_test_3":
            raise EngineError("server gone")
        return item.id

    for concurrency in (1, 3):
        got = []
        with pytest.raises(EngineError, match="item gsm8k_test_3: server gone"):
            for rec in in_order(items, make, concurrency):  # type: ignore[arg-type]
                got.append(rec)
        assert got == ["gsm8k_test_0", "gsm8k_test_1", "gsm8k_test_2"]


def test_app_run_in_process_writes_and_scores_a_replay(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run(_cfg(tmp_path, backend=scripted(ScriptedBackend(engine="outlines"))), [GSM8K],
               tmp_path / "o", tmp_path, out, err)
    assert code == 0, err.getvalue()
    replay = read_replay(tmp_path / "o/replay.jsonl")
    assert [r.id for r in replay.records] == ["gsm8k_test_0", "gsm8k_test_1", "gsm8k_test_2"]
    assert replay.header.engine == "outlines" and replay.end is not None
    report = json.loads((tmp_path / "o/report.json").read_text())
    assert report["mode"] == "live" and report["n"] == 3
    page = embedded((tmp_path / "o/report.html").read_text("utf-8"))  # live runs write it too
    assert page["prompts_note"].endswith("the replay's task hash matches, so they are the ones sent.")
    assert [i["arms"]["unconstrained"]["text"]["s"] for i in page["items"]] == \
        [r.arms["unconstrained"].text for r in replay.records]


def test_a_failed_request_records_nothing_and_resume_completes(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, backend=scripted(ScriptedBackend(engine="outlines", fail_on_call=9)))
    # 6 arms per item plus a canary: request 9 is the second item's third request
    with pytest.raises(EngineError, match="item gsm8k_test_1: .*resume=true continues"):
        run(cfg, [GSM8K], tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    replay = tmp_path / "o/replay.jsonl"
    assert [r.id for r in read_replay(replay).records] == ["gsm8k_test_0"]
    resumed = _cfg(tmp_path, resume=True, replay=str(replay),
                   backend=scripted(ScriptedBackend(engine="outlines")))
    code = run(resumed, [GSM8K], tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    assert code == 0
    assert [r.id for r in read_replay(replay).records] == [f"gsm8k_test_{i}" for i in range(3)]


def test_resume_refuses_another_engine(tmp_path: Path) -> None:
    run(_cfg(tmp_path, n=1, backend=scripted(ScriptedBackend(engine="outlines"))), [GSM8K],
        tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    resumed = _cfg(tmp_path, resume=True, replay=str(tmp_path / "o/replay.jsonl"),
                   backend=scripted(ScriptedBackend(engine="llamacpp")))
    with pytest.raises(ReplayError, match="cannot resume: meta.engine is 'outlines'"):
        run(resumed, [GSM8K], tmp_path / "p", tmp_path, io.StringIO(), io.StringIO())


def test_canary_refuses_a_backend_that_ignores_the_schema(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="canary failed on engine outlines"):
        run(_cfg(tmp_path, backend=scripted(ScriptedBackend(lambda m, c: "a haiku",
                                                             engine="outlines"))),
            [GSM8K], tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    assert not (tmp_path / "o/replay.jsonl").exists()


def test_resume_refuses_another_shard(tmp_path: Path) -> None:
    shard = {"index": 0, "count": 2}
    run(_cfg(tmp_path, shard=shard, backend=scripted(ScriptedBackend(engine="outlines"))),
        [GSM8K], tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    resumed = _cfg(tmp_path, resume=True, replay=str(tmp_path / "o/replay.jsonl"),
                   shard={"index": 1, "count": 2},
                   backend=scripted(ScriptedBackend(engine="outlines")))
    with pytest.raises(ReplayError, match="cannot resume: meta.shard is .*'index': 0"):
        run(resumed, [GSM8K], tmp_path / "p", tmp_path, io.StringIO(), io.StringIO())


def test_a_shard_s_progress_names_the_shard(tmp_path: Path) -> None:
    """The shard jobs of a sweep may share one stderr: every progress line says which
    shard it counts (as shard.index and shard.count give it), an unsharded run's does not."""
    def bars(**extra: object) -> list[str]:
        err = io.StringIO()
        code = run(_cfg(tmp_path, progress="on", **extra,
                        backend=scripted(ScriptedBackend(engine="outlines"))),
                   [GSM8K], tmp_path / str(len(extra)), tmp_path, io.StringIO(), err)
        assert code == 0, err.getvalue()
        return [part for part in err.getvalue().split("\r") if "items/s" in part]

    sharded = bars(shard={"index": 1, "count": 2})
    assert sharded and all(b.startswith("gsm8k [shard 1 of 2] [") for b in sharded), sharded
    whole = bars()
    assert whole and all(b.startswith("gsm8k [") and "shard" not in b for b in whole), whole


def test_arms_schemas_generates_only_that_schema_s_arms(tmp_path: Path) -> None:
    """A live run with arms.schemas=[reasoning] asks the backend for those arms only (no
    answer schema is sent or compiled), records them in the header, and scores them."""
    cfg = _cfg(tmp_path, n=2, arms={"name": "standard", "kinds": list(ARM_KINDS),
                                    "schemas": ["reasoning"],
                                    "max_tokens": {"free": 11, "json": 22, "package": 33}},
               backend=scripted(backend := ScriptedBackend(engine="outlines")))
    code = run(cfg, [GSM8K], tmp_path / "o", tmp_path, io.StringIO(), io.StringIO())
    assert code == 0
    keys = ["unconstrained", "prompt_json[reasoning]", "constrained[reasoning]"]
    replay = read_replay(tmp_path / "o/replay.jsonl")
    assert replay.header.arms == keys
    assert all(list(r.arms) == keys for r in replay.records)
    sent = {json.dumps(c.schema_, sort_keys=True) for _, c in backend.calls
            if c.schema_ is not None and "canary" not in json.dumps(c.schema_)}
    schemas = GSM8K.items(1)[0].schemas
    assert sent == {json.dumps(schemas["reasoning"], sort_keys=True)}  # never the answer's
    assert list(json.loads((tmp_path / "o/report.json").read_text())["arms"]) == keys
