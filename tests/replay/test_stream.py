"""Reading interventions as a replay is streamed: the fast path accepts exactly the plain
shape and gives what the pydantic model gives; absent stays "not recorded"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vbw.errors import ReplayError
from vbw.replay.record import ScoredRecord, as_scored
from vbw.replay.record import light as _light
from vbw.replay.stream import open_replay
from vbw.replay.format import ItemRecord
from vbw.score.finish import codes as finish_codes

EVENT = {"pos": 2, "char": 5, "wanted": "x", "forced": "ab", "lp_wanted": -0.1,
         "lp_forced": -2.0}


def _same(a: ScoredRecord, b: ScoredRecord) -> bool:
    """Equal records: every field, and of the arm records the finish reasons (all that is
    read of them; the fast path keeps them as decoded, the model's path as its values)."""
    keys = ["constrained[answer]", "unconstrained", "absent"]
    return a[:-1] == b[:-1] and finish_codes(a.arms, keys) == finish_codes(b.arms, keys)


def _line(**arm: object) -> dict:
    return {"id": "a", "arms": {"constrained[answer]": {"text": '{"answer": 12}', **arm},
                                "unconstrained": {"text": "12"}}}


@pytest.mark.parametrize("events", [[EVENT], [], [{**EVENT, "allowed_mass": 0.5,
                                                   "wanted_id": 7, "forced_id": None}]])
def test_fast_path_equals_the_model(events: list) -> None:
    obj = _line(interventions=events)
    fast = _light(obj)
    assert fast is not None  # plain shape: no pydantic
    assert _same(fast, as_scored(ItemRecord.model_validate(obj)))
    assert fast.interventions == {"constrained[answer]": [(5, 2)] * len(events)}


def test_absent_field_is_not_recorded() -> None:
    fast = _light(_line())
    assert fast is not None and fast.interventions is None
    assert _light(_line(interventions=None)).interventions is None


@pytest.mark.parametrize("event", [{**EVENT, "lp_wanted": 0}, {**EVENT, "pos": True},
                                   {**EVENT, "extra": 1}, {**EVENT, "char": -1},
                                   {k: v for k, v in EVENT.items() if k != "forced"}])
def test_other_shapes_go_to_the_model(event: dict) -> None:
    assert _light(_line(interventions=[event])) is None


def test_a_coercible_event_reads_as_the_model_reads_it(tmp_path: Path) -> None:
    head = {"meta": {"format": "vbw-replay/1", "task": "t",
                     "arms": ["constrained[answer]", "unconstrained"]}}
    good = _line(interventions=[{**EVENT, "lp_wanted": 0}])
    bad = {**_line(interventions=[{**EVENT, "char": "x"}]), "id": "b"}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(head) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    (rec,) = open_replay(path).records()
    assert rec.interventions == {"constrained[answer]": [(5, 2)]}
    path.write_text(json.dumps(head) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ReplayError, match=r"r.jsonl:2: .*interventions.0.char"):
        list(open_replay(path).records())


def test_a_line_with_interventions_streams_as_a_scored_record(tmp_path: Path) -> None:
    meta = {"format": "vbw-replay/1", "task": "t", "arms": ["unconstrained", "constrained[a]"]}
    event = {"pos": 0, "char": 0, "wanted": "```", "forced": "{", "lp_wanted": -1.6,
             "lp_forced": -2.1, "allowed_mass": 0.2}
    lines = [{"meta": meta},
             {"id": "a", "arms": {"unconstrained": {"text": "x"},
                                  "constrained[a]": {"text": "{}", "interventions": [event]}}},
             {"id": "b", "arms": {"unconstrained": {"text": "y"},
                                  "constrained[a]": {"text": "{}", "interventions": []}}}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = list(open_replay(path).records())
    assert all(isinstance(r, ScoredRecord) for r in got)
    assert [(r.id, r.texts) for r in got] == [
        ("a", {"unconstrained": "x", "constrained[a]": "{}"}),
        ("b", {"unconstrained": "y", "constrained[a]": "{}"})]
    full = [rec for _, rec in open_replay(path).items(full=True)]
    assert full[0].arms["constrained[a]"].interventions[0].forced == "{"
    assert full[1].arms["constrained[a]"].interventions == []


@pytest.mark.parametrize("arm", [{"seconds": 1}, {"seconds": 1.5, "compile_seconds": 0},
                                 {"n_tokens": None, "ttft_seconds": 2},
                                 {"finish_reason": "length", "reuses": "unconstrained"},
                                 {"redacted": True, "unsupported_schema": None, "text": None}])
def test_plain_arm_fields_take_the_fast_path(arm: dict) -> None:
    fast = _light(_line(**arm))
    assert fast is not None and _same(fast, as_scored(ItemRecord.model_validate(_line(**arm))))


@pytest.mark.parametrize("arm", [{"seconds": None}, {"compile_seconds": "1"},
                                 {"n_tokens": True}, {"n_tokens": 3.0},
                                 {"ttft_seconds": "1"}, {"finish_reason": "eos"},
                                 {"finish_reason": 1}, {"reuses": 1}, {"redacted": 1},
                                 {"text": 5}, {"interventions": {}}, {"extra": 1}])
def test_other_arm_fields_go_to_the_model(arm: dict) -> None:
    assert _light(_line(**arm)) is None


BIG = 123456789012345678901234567890  # beyond 64 bits: orjson would make it a float


def test_decode_exact_is_json_for_integers_beyond_64_bits() -> None:
    from vbw.replay.stream import decode, decode_exact

    line = json.dumps({"a": [BIG, -BIG, 2**63, 1.5e300, "12345678901234567890123"]}).encode()
    assert decode_exact(line) == json.loads(line)
    assert type(decode_exact(line)["a"][0]) is int
    assert decode(line) != json.loads(line)  # what the exact decode is for
    short = b'{"a": [1234567890123456789, 1.5, "x"]}'  # 19 digits, within 64 bits
    assert decode_exact(short) == json.loads(short)


def test_kept_values_are_jsons_exactly(tmp_path: Path) -> None:
    """What a read keeps (a model's fields, the header's meta, report.html's item data)
    holds an integer beyond 64 bits as the int it is; the light path, which keeps only
    texts, takes the line as it did."""
    meta = {"format": "vbw-replay/1", "task": "t", "arms": ["unconstrained"],
            "notes": {"seed": BIG}}
    message = {"content": None, "tool_calls": [{"arguments": {"n": BIG}}]}
    lines = [{"meta": meta},
             {"id": "a", "arms": {"unconstrained": {"text": "x", "message": message}}},
             {"id": "b", "arms": {"unconstrained": {"text": "y", "n_tokens": BIG}}}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    stream = open_replay(path)
    assert stream.meta_as_written["notes"] == {"seed": BIG} == stream.header.notes
    full = [rec for _, rec in stream.items(full=True)]
    assert full[0].arms["unconstrained"].message == message
    assert full[1].arms["unconstrained"].n_tokens == BIG
    assert [obj for _, obj in open_replay(path).lines(exact_values=True)] == lines[1:]
    assert [r.texts for r in open_replay(path).records()] == [{"unconstrained": "x"},
                                                              {"unconstrained": "y"}]
