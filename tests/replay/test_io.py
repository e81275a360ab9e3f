"""Replay reading (legacy and v1), validation errors, durable appends and torn tails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPLAYS
from vbw.errors import ReplayError
from vbw.replay import (ArmRecord, CompleteHeader, EndV1, ItemRecord, ReplayWriter,
                        available_replays, locate_replay, read_replay)
from vbw.replay.io import engine_shown


def _meta() -> CompleteHeader:
    return CompleteHeader(format="vbw-replay/1", task="t", task_hash="h", n=2,
                          engine="outlines", arms=["unconstrained"],
                          model={"name": "m", "file": "m.gguf", "sha256": "0" * 64,
                                 "source": "x"},
                          versions={"vbw": "0.2.0"}, hardware={"cpu": "c"},
                          decoding={"temperature": 0}, max_tokens={"free": 8}, kv_reuse=True,
                          canary_seconds={"outlines": 0.1}, started="2026-01-01T00:00:00+00:00",
                          load_seconds=0.5)


def _rec(i: str) -> ItemRecord:
    return ItemRecord(id=i, arms={"unconstrained": ArmRecord(text="hi", n_tokens=1,
                                                             finish_reason="stop")})


def test_reads_bundled_legacy_replays() -> None:
    r = read_replay(REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl")
    assert r.header.version == 0 and len(r.records) == 200 and r.header.task == "gsm8k"
    assert r.records[0].arms["reason_then_constrain[answer]"].reuses == "unconstrained"


def test_legacy_end_of_run_becomes_the_end_marker() -> None:
    r = read_replay(REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl")
    assert r.end is not None and (r.end.wall_seconds, r.end.items) == (2775.6, 200)
    assert r.end.ended == "2026-10-10T19:52:20-0400"


def test_locate_lists_what_exists(tmp_path: Path) -> None:
    assert "gsm8k/qwen2_5_0_5b/outlines" in available_replays(REPLAYS)
    with pytest.raises(ReplayError, match="available task/model/engine: .*gsm8k/qwen2_5_0_5b/outlines"):
        locate_replay(REPLAYS, "gsm8k", "qwen2_5_0_5b", "nope")


def test_writer_roundtrip_and_end(tmp_path: Path) -> None:
    w = ReplayWriter(tmp_path / "r.jsonl")
    w.start(_meta())
    w.append(_rec("a"))
    w.append(_rec("b"))
    w.finish(EndV1(ended="2026-01-01T00:01:00+00:00", wall_seconds=60.0, items=2))
    r = read_replay(tmp_path / "r.jsonl")
    assert r.header.version == 1 and [x.id for x in r.records] == ["a", "b"]
    assert r.end is not None and r.end.items == 2
    assert r.header.as_written() == r.meta_as_written == _meta().as_written()


def test_torn_tail_ignored_and_cut_on_resume(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    w = ReplayWriter(p)
    w.start(_meta())
    w.append(_rec("a"))
    with open(p, "ab") as f:
        f.write(b'{"id": "b", "arms": {"uncons')   # a crash mid-write
    r = read_replay(p)
    assert r.torn_tail and [x.id for x in r.records] == ["a"]
    ReplayWriter(p).resume()
    w.append(_rec("b"))
    r = read_replay(p)
    assert not r.torn_tail and [x.id for x in r.records] == ["a", "b"]


def test_resume_drops_end_marker(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    w = ReplayWriter(p)
    w.start(_meta())
    w.append(_rec("a"))
    w.finish(EndV1(ended="x", wall_seconds=1.0, items=1))
    assert read_replay(p).end is not None
    w.resume()
    assert read_replay(p).end is None


@pytest.mark.parametrize("lines,match", [
    (['{"nometa": 1}'], r":1: first line must be"),
    (['{"meta": {"format": "vbw-replay/9"}}'], r"meta.format 'vbw-replay/9' is not supported"),
    (['{"meta": {"task": "t"}}', '{"id": "a", "arms": {"unconstrained": {"txt": "x"}}}'],
     r":2: arms.unconstrained.txt: unknown key"),
    (['{"meta": {"task": "t"}}', 'not json'], r":2: not valid JSON"),
    (['{"meta": {"task": "t"}}', '{"id": "a", "arms": {}}', '{"id": "a", "arms": {}}'],
     r":3: item id 'a' appears twice"),
    (['{"meta": {"task": "t"}, "arms": []}'], r":1: first line must be"),
    (['{"meta": {"n": 3}}'], r":1: meta.task: required key is missing"),
    (['{"meta": {"format": "vbw-replay/1", "task": "t"}}'],
     r":1: meta.arms: required key is missing"),
    (['{"meta": {"format": "vbw-replay/1", "task": "t", "arms": null}}'],
     r":1: meta.arms: required in a vbw-replay/1 header, not null"),
    (['{"meta": {"task": "t", "arms": ["unconstrained"]}}'],
     r":1: meta.format: required key is missing"),
    (['{"meta": {"format": "vbw-replay/1", "task": "t", "arms": [], "version": 1}}'],
     r":1: meta.version: unknown key; did you mean 'versions'\? valid: format, task,"),
    (['{"meta": {"format": "vbw-replay/1", "task": "t", "arms": ["unconstrained"]}}',
      '{"id": "a", "arms": {"unconstrained": {"text": "x"}, "constrained[s]": {"text": "{}"}}}'],
     r":2: arms.constrained\[s\]: not an arm the header lists \(meta.arms: unconstrained\)"),
])
def test_malformed_replays(tmp_path: Path, lines: list[str], match: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayError, match=match) as e:
        read_replay(p)
    assert "bad.jsonl" in str(e.value) and "\n" not in str(e.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="replay file not found"):
        read_replay(tmp_path / "none.jsonl")


def test_v1_meta_is_validated(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    meta = _meta().model_dump(mode="json")
    meta["engin"] = meta.pop("engine")
    p.write_text(json.dumps({"meta": meta}) + "\n")
    with pytest.raises(ReplayError, match=r":1: meta\..*engin"):
        read_replay(p)


def test_a_compact_whitespace_replay_is_listed_as_the_engine_and_its_setting() -> None:
    """outlines-compact.jsonl is outlines with engine.whitespace=compact, not an engine."""
    assert engine_shown("outlines-compact") == "outlines (engine.whitespace=compact)"
    assert engine_shown("llamacpp") == "llamacpp" and engine_shown("-compact") == "-compact"
    with pytest.raises(ReplayError) as e:
        locate_replay(REPLAYS, "bfcl_simple", "smollm2_135m", "llguidance-compact")
    msg = str(e.value)
    assert "engine=llguidance engine.whitespace=compact under" in msg
    assert "bfcl_simple/smollm2_135m/outlines (engine.whitespace=compact)" in msg
    assert "outlines-compact" not in msg


def test_a_lone_surrogate_is_written_losslessly_and_n_tokens_may_be_unknown(
        tmp_path: Path) -> None:
    """A server's JSON may carry "\\ud800": it is kept as that JSON escape, not lost to a
    UnicodeEncodeError on every retry; an unknown token count stays null."""
    path = tmp_path / "r.jsonl"
    w = ReplayWriter(path)
    w.start(_meta())
    text = "a\ud800b\udfff"
    w.append(ItemRecord(id="s", arms={"unconstrained": ArmRecord(
        text=text, n_tokens=None, finish_reason="stop", redacted=True)}))
    w.finish(EndV1(ended="2026-01-01T00:00:01+00:00", wall_seconds=1.0, items=1))
    raw = path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    assert b"a\\ud800b\\udfff" in raw
    arm = read_replay(path).records[0].arms["unconstrained"]
    assert (arm.text, arm.n_tokens, arm.redacted) == (text, None, True)


def test_merge_and_reports_write_lone_surrogates(tmp_path: Path) -> None:
    from vbw.modes.merge.shards import write_merged
    from vbw.report.files import write_atomic

    rec = ItemRecord(id="s", arms={"unconstrained": ArmRecord(text="\ud800",
                                                              finish_reason="stop")})
    end = EndV1(ended="2026-01-01T00:00:01+00:00", wall_seconds=1.0, items=1)
    write_merged(tmp_path / "m.jsonl", _meta(), [rec], end)
    assert read_replay(tmp_path / "m.jsonl").records[0].arms["unconstrained"].text == "\ud800"
    write_atomic(tmp_path / "x.json", json.dumps({"t": "\ud800"}, ensure_ascii=False))
    assert json.loads((tmp_path / "x.json").read_text(encoding="utf-8")) == {"t": "\ud800"}


def test_a_line_the_model_coerces_streams_as_it_reads_whole(tmp_path: Path) -> None:
    """A line outside the plain shape (`n_tokens` written 3.0) goes through the model in
    the streamed read too, to the same record."""
    from vbw.replay.stream import open_replay

    path = tmp_path / "r.jsonl"
    head = {"meta": _meta().as_written()}
    line = {"id": "a", "arms": {"unconstrained": {"text": "t", "n_tokens": 3.0}}}
    path.write_text(json.dumps(head) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    assert [(r.id, r.texts) for r in open_replay(path).records()] == \
        [("a", {"unconstrained": "t"})]
    assert read_replay(path).records[0].arms["unconstrained"].n_tokens == 3


def test_a_written_line_keeps_within_max_interventions(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """What vbw writes re-scores: at MAX_INTERVENTIONS in a line every arm keeps its
    interventions; past it, the arms with the most record them as not recorded (None),
    until the rest fit, and the replay reads back."""
    from vbw.replay import io, stream
    from vbw.replay.format import Intervention

    monkeypatch.setattr(stream, "MAX_INTERVENTIONS", 5)
    monkeypatch.setattr(io, "MAX_INTERVENTIONS", 5)
    event = Intervention(pos=0, char=0, wanted="a", forced="b", lp_wanted=-0.1, lp_forced=-1.0)

    def rec(i: str, big: int, small: int) -> ItemRecord:
        return ItemRecord(id=i, arms={"a": ArmRecord(text="x", interventions=[event] * big),
                                      "b": ArmRecord(text="y", interventions=[event] * small),
                                      "c": ArmRecord(text="z")})

    path = tmp_path / "r.jsonl"
    w = ReplayWriter(path)
    w.start(_meta().model_copy(update={"arms": ["a", "b", "c"]}))
    w.append(rec("1", 3, 2))
    w.append(rec("2", 4, 2))
    arms = [r.arms for r in read_replay(path).records]
    assert [len(arms[0][k].interventions) for k in "ab"] == [3, 2]
    assert arms[1]["a"].interventions is None and len(arms[1]["b"].interventions) == 2
    assert arms[1]["c"].interventions is None
