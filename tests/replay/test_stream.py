"""Reading a replay as it is streamed: interventions read as the model reads them (the
plain shape's fast path is tests/replay/test_record.py's), values exactly json's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vbw.errors import ReplayError
from vbw.replay.record import ScoredRecord
from vbw.replay.stream import open_replay

EVENT = {"pos": 2, "char": 5, "wanted": "x", "forced": "ab", "lp_wanted": -0.1,
         "lp_forced": -2.0}


def _line(**arm: object) -> dict:
    return {"id": "a", "arms": {"constrained[answer]": {"text": '{"answer": 12}', **arm},
                                "unconstrained": {"text": "12"}}}


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


def test_a_line_past_the_json_limits_is_one_line_naming_it(tmp_path: Path) -> None:
    """An item line (or the header) nested past MAX_DEPTH, or holding an integer past
    MAX_INT_DIGITS digits, is a ReplayError naming the file and line; a line at the depth
    limit is read."""
    from vbw.task.jsontext.values import MAX_DEPTH
    head = json.dumps({"meta": {"format": "vbw-replay/1", "task": "t",
                                "arms": ["constrained[answer]", "unconstrained"]}})
    path = tmp_path / "r.jsonl"
    # the line, arms, an arm and its message are 4 levels: the message holds the rest
    at = _line(message={"x": json.loads("[" * (MAX_DEPTH - 5) + "]" * (MAX_DEPTH - 5))})
    path.write_text(head + "\n" + json.dumps(at) + "\n")
    assert [r.id for r in open_replay(path).records()] == ["a"]
    deep = json.dumps(_line()).replace('"12"}', '"12", "message": ' + '{"a": ' * 2000 +
                                       "1" + "}" * 2001, 1)
    big = json.dumps(_line()).replace('"text": "12"', '"text": "12", "n_tokens": ' +
                                      "9" * 5001, 1)
    for line, why in [(deep, "nested 2,003 arrays/objects deep"),
                      (big, "an integer of 5,001 digits")]:
        path.write_text(head + "\n" + json.dumps(_line()) + "\n" + line + "\n")
        with pytest.raises(ReplayError, match=f"r.jsonl:3: the line is refused: {why}"):
            open_replay(path).drain()
    path.write_text(head[:-2] + ', "x": ' + "[" * 1025 + "]" * 1025 + "}}\n")
    with pytest.raises(ReplayError, match="r.jsonl:1: the line is refused: nested 1,027"):
        open_replay(path)


def test_a_line_past_max_interventions_is_refused_before_it_is_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MAX_INTERVENTIONS in a line (over its arms) are read; one more is a ReplayError
    naming the line, counted on the bytes (a text that spells the key does not count)."""
    from vbw.replay import stream

    monkeypatch.setattr(stream, "MAX_INTERVENTIONS", 4)
    head = json.dumps({"meta": {"format": "vbw-replay/1", "task": "t",
                                "arms": ["constrained[answer]", "unconstrained"]}})
    path = tmp_path / "r.jsonl"
    line = _line(interventions=[EVENT] * 3)
    line["arms"]["unconstrained"].update(interventions=[EVENT], text='"lp_forced"')
    path.write_text(head + "\n" + json.dumps(line) + "\n")
    assert [r.id for r in open_replay(path).records()] == ["a"]
    line["arms"]["unconstrained"]["interventions"] *= 2
    path.write_text(head + "\n" + json.dumps(line) + "\n")
    with pytest.raises(ReplayError, match="r.jsonl:2: the line is refused: it holds 5 "
                                          "interventions \\(vbw reads at most 4 in a line\\)"):
        open_replay(path).drain()


HEAD = {"meta": {"format": "vbw-replay/1", "task": "t", "arms": ["unconstrained"]}}


@pytest.mark.parametrize(("line", "error"), [
    ({"id": "a", "arms": {"unconstrained": "12"}},
     ":2: arms.unconstrained: should be an object, the arm record (got '12')"),
    ({"id": "a", "arms": {"unconstrained": {"text": "1", "tool": "f"}}},
     ":2: arms.unconstrained.tool: should be an object, the tool call (got 'f')"),
    ({"id": "a", "arms": ["unconstrained"]},
     ":2: arms: should be an object (got ['unconstrained'])"),
    ("12", ":2: (top level): should be an object, the item line (got '12')"),
    ({"end": 3}, ":2: end: should be an object, the end marker (got 3)"),
    ({"end": {"ended": 3, "wall_seconds": 1.0, "items": 0}},
     ":2: end.ended: Input should be a valid string (got 3)"),
])
def test_a_bad_line_is_named_in_the_replay_s_words(tmp_path: Path, line: object,
                                                    error: str) -> None:
    """The field's path in the line and the record by its title (`arm record`), never a
    class name of vbw's (ArmRecord), nor a `.` hanging off `end`."""
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(HEAD) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(ReplayError) as e:
        list(open_replay(path).items(full=True))
    assert str(e.value) == f"{path}{error}"


def test_a_bad_arm_field_is_one_line_at_the_command_line(tmp_path: Path) -> None:
    from tests.conftest import REPLAYS, run_vbw

    head = (REPLAYS / "gsm8k/smollm2_135m/llamacpp.jsonl").open(encoding="utf-8").readline()
    path = tmp_path / "r.jsonl"
    arm = {"unconstrained": "12", "constrained[answer]": {"text": "{\"answer\": 12}"}}
    path.write_text(head + json.dumps({"id": "gsm8k_test_0", "arms": arm}) + "\n",
                    encoding="utf-8")
    proc = run_vbw("task=gsm8k", f"replay={path}", f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"vbw: error: {path}:2: arms.unconstrained: should be an object, the arm record "
        "(got '12')")
    assert "ArmRecord" not in proc.stderr


# vbw-replay/2: k samples per item and arm

def _sampled(tmp_path: Path, k: int | None, *items: dict, fmt: str = "vbw-replay/2") -> Path:
    meta = {"format": fmt, "task": "t", "arms": ["constrained[answer]", "unconstrained"],
            "decoding": {} if k is None else {"samples": k}}
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [{"meta": meta}, *items]))
    return path


def _arms(answer: int, tax: float | None = None) -> dict:
    con = {"text": f'{{"answer": {answer}}}', **({} if tax is None else {"tax": tax})}
    return {"constrained[answer]": con, "unconstrained": {"text": str(answer)}}


def test_the_largest_k_reads(tmp_path: Path) -> None:
    line = {"id": "a", "arms": _arms(1), "samples": [_arms(i) for i in range(2, 101)]}
    (rec,) = open_replay(_sampled(tmp_path, 100, line)).records()
    assert len(rec.samples) == 99


def test_a_sampled_line_streams_every_sample_fast_and_full(tmp_path: Path) -> None:
    line = {"id": "a", "arms": _arms(1, 0.5), "samples": [_arms(2, 0.0), _arms(3, 1.5)]}
    path = _sampled(tmp_path, 3, line)
    (rec,) = open_replay(path).records()
    assert open_replay(path).header.samples == 3
    assert rec.texts["unconstrained"] == "1"
    assert [s.texts["unconstrained"] for s in rec.samples] == ["2", "3"]
    assert [s.taxes for s in rec.samples] == [{"constrained[answer]": 0.0},
                                              {"constrained[answer]": 1.5}]
    (full,) = [r for _, r in open_replay(path).items(full=True)]
    assert [s["unconstrained"].text for s in full.samples] == ["2", "3"]


@pytest.mark.parametrize("samples, words", [
    (None, "decoding.samples=3 needs 2 more sample.s. per item after `arms`, this line has none"),
    ([_arms(2)], "needs 2 more sample.s. per item after `arms`, this line has 1"),
    ([_arms(2), {"unconstrained": {"text": "3"}}], r"samples.1: its arm keys differ"),
])
def test_a_sampled_line_holds_k_samples_of_every_arm(tmp_path: Path, samples, words) -> None:
    line = {"id": "a", "arms": _arms(1), **({} if samples is None else {"samples": samples})}
    with pytest.raises(ReplayError, match=r"r.jsonl:2: samples: .*" + words
                       if "keys" not in words else r"r.jsonl:2: " + words):
        list(open_replay(_sampled(tmp_path, 3, line)).records())


def test_a_v1_line_holds_one_sample(tmp_path: Path) -> None:
    line = {"id": "a", "arms": _arms(1), "samples": [_arms(2)]}
    path = _sampled(tmp_path, None, line, fmt="vbw-replay/1")
    with pytest.raises(ReplayError, match=r"r.jsonl:2: samples: only a vbw-replay/2 replay"):
        list(open_replay(path).records())


@pytest.mark.parametrize("fmt, k, words", [
    ("vbw-replay/2", None, r"needs decoding.samples from 2 to 100 \(an integer\), got 1"),
    ("vbw-replay/2", 1, r"needs decoding.samples from 2 to 100 \(an integer\), got 1"),
    ("vbw-replay/2", 2.0, r"needs decoding.samples from 2 to 100 \(an integer\), got 2.0"),
    # the Tally holds items x arms x k per figure: k is bounded as the config bounds it
    ("vbw-replay/2", 101, r"needs decoding.samples from 2 to 100 \(an integer\), got 101"),
    ("vbw-replay/1", 2, r"decoding.samples=2 needs format 'vbw-replay/2'"),
])
def test_the_header_says_k_and_the_format_agrees(tmp_path: Path, fmt, k, words) -> None:
    with pytest.raises(ReplayError, match=r"r.jsonl:1: .*" + words):
        open_replay(_sampled(tmp_path, k, fmt=fmt))
