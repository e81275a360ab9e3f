"""The merged replay's lines (vbw.modes.merge.joined): each written as the ItemRecord model
dumps it, whether passed on as decoded or through the model, and read from the shards in
task order whatever order a shard holds them in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vbw.replay.format import ItemRecord
from vbw.modes.merge.joined import as_dumped, dumped, joined

PLAIN = {"id": "a", "arms": {"x": {"text": "t", "seconds": 1.5, "compile_seconds": 0.0,
                                   "n_tokens": 3, "finish_reason": "stop"}},
         "item_seconds": 2.0, "prompt_hash": "h"}
SHAPES = {
    "as vbw writes it": PLAIN,
    "an int where the model keeps a float": {"id": "a", "arms": {"x": {"text": "t",
                                             "seconds": 1, "compile_seconds": 0}}},
    "a float where the model keeps an int": {"id": "a", "arms": {"x": {"n_tokens": 3.0}}},
    "keys in another order": {"arms": {"x": {"seconds": 1.5, "text": "t"}}, "id": "a"},
    "explicit nulls": {"id": "a", "arms": {"x": {"text": None, "ttft_seconds": None}},
                       "prompt_hash": None},
    "defaults left out": {"id": "a", "arms": {"x": {"text": "t"}}},
    "not a finite number": {"id": "a", "arms": {"x": {"text": "t", "seconds": float("nan"),
                                                      "compile_seconds": 0.0}}},
    "interventions": {"id": "a", "arms": {"x": {"text": "t", "seconds": 0.0,
                                                "compile_seconds": 0.0, "interventions": [
                                                    {"pos": 0, "char": 0, "wanted": "a",
                                                     "forced": "b", "lp_wanted": -0.1,
                                                     "lp_forced": -2.0}]}}},
    "a lone surrogate": {"id": "a", "arms": {"x": {"text": "a\ud800", "seconds": 0.0,
                                                   "compile_seconds": 0.0}}},
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_line_is_written_as_the_model_dumps_it(shape: str) -> None:
    obj = json.loads(json.dumps(SHAPES[shape]))
    want = ItemRecord.model_validate(obj).model_dump(mode="json", exclude_none=True)
    got = as_dumped(obj)
    assert json.dumps(got) == json.dumps(want)


def test_the_plain_shape_is_passed_on_without_the_model() -> None:
    obj = json.loads(json.dumps(PLAIN))
    assert as_dumped(obj) is obj


def test_lines_come_in_task_order_whatever_a_shard_holds(tmp_path: Path) -> None:
    ids = [f"i{k}" for k in range(7)]
    orders = [[0, 2, 4, 6], [5, 3, 1]]  # shard 1 holds its items backwards
    paths = []
    for i, order in enumerate(orders):
        lines = [{"meta": {}}, *({"id": ids[k], "arms": {"x": {"text": ids[k]}}}
                                 for k in order), {"end": {}}]
        paths.append(tmp_path / f"s{i}.jsonl")
        paths[-1].write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"id": "i',
                             encoding="utf-8")  # and ends in a torn line
    got = [(i, rec["id"], rec["arms"]["x"]["text"]) for i, rec, _ in joined(paths, ids)]
    assert got == [(k % 2, ids[k], ids[k]) for k in range(7)]


def test_a_merged_line_keeps_an_integer_beyond_64_bits(tmp_path: Path) -> None:
    """Joining shards re-dumps their lines: values are json's, never orjson's float for an
    integer literal beyond 64 bits (a tool call's argument, say)."""
    big = 123456789012345678901234567890
    message = {"tool_calls": [{"arguments": {"n": big}}]}
    path = tmp_path / "s0.jsonl"
    lines = [{"meta": {}}, {"id": "i0", "arms": {"x": {"text": "t", "message": message}}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ((_, rec, _),) = list(joined([path], ["i0"]))
    assert rec["arms"]["x"]["message"] == message
    assert type(rec["arms"]["x"]["message"]["tool_calls"][0]["arguments"]["n"]) is int


def test_a_plain_line_is_spelled_alike_unless_a_float_is_tiny() -> None:
    """`dumped` says when orjson may write the line (vbw.modes.merge.shards.item_line): a float
    in [1e-9, 1e-4) is one orjson spells without json's exponent."""
    obj = json.loads(json.dumps(PLAIN))
    assert dumped(obj) == (obj, True)
    tiny = json.loads(json.dumps(PLAIN))
    tiny["arms"]["x"]["seconds"] = 2.5e-05
    assert dumped(tiny) == (tiny, False)
    for shape in ("explicit nulls", "interventions", "not a finite number"):
        assert dumped(json.loads(json.dumps(SHAPES[shape])))[1] is False
