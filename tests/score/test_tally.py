"""vbw.score.tally: a per-item figure is one Tally field (and the line that computes it)
plus its report line; its merge across processes follows from the field. A toy figure,
added that way only, reaches report.json the same in one process and in two. The pass
builds each item from its own task row, a shard's too."""

from __future__ import annotations

import io
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.modes import scoring
from vbw import parallel
from vbw.score import split
from vbw.score.results import Report
from vbw.score.shown import Lowest, Showing, Shown
from vbw.replay.stream import open_replay
from vbw.score.stream import Pass, score_stream
from vbw.score.tally import Size, Tally, per_item
from vbw.task.arms import ARM_KINDS, parse_arm
from vbw.task.runner import load_task

REPLAY = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"


@dataclass
class ToyTally(Tally):
    """The toy figure: each (item, arm)'s text length in characters."""

    chars: np.ndarray = per_item(lambda s: np.zeros((s.n, s.arms), dtype=np.int64),
                                 states=True)

    def add_scored(self, pos: int, p: Any, rec: Any, item: Any) -> None:
        super().add_scored(pos, p, rec, item)
        self.chars[pos] = [len(rec.texts[a.key] or "") for a in p.arms]


class ToyReport(Report):
    text_chars: dict[str, int]  # the toy figure's report line: its total per arm


def _with_toy(build: Any) -> Any:
    def build_report(states: Any, **kw: Any) -> Report:
        report = build(states, **kw)
        chars = {a.key: int(states.chars[:, j].sum()) for j, a in enumerate(states.arms)}
        return ToyReport.model_construct(**dict(report), text_chars=chars)
    return build_report


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The toy figure registered; how many items each merged worker's tally held, with
    the toy figure in its state."""
    monkeypatch.setattr(Pass, "TALLY", ToyTally)
    monkeypatch.setattr(scoring, "build_report", _with_toy(scoring.build_report))
    merged: list[int] = []
    real = Pass.merge

    def merge(self: Pass, st: dict[str, Any]) -> None:
        assert "chars" in st["tally"]
        merged.append(int(st["tally"]["held"].sum()))
        real(self, st)

    monkeypatch.setattr(Pass, "merge", merge)
    parent, read = os.getpid(), split._read

    def slow(p: Any, stream: Any) -> Any:  # this process lags: the worker claims runs
        if os.getpid() == parent:
            time.sleep(0.002)
        return read(p, stream)

    monkeypatch.setattr(split, "_read", slow)
    return merged


def _report_json(tmp: Path, processes: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv(parallel.ENV, processes)
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": list(ARM_KINDS),
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "outputs": ["json"], "replay": str(REPLAY)})
    code = run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp, tmp, io.StringIO(),
               io.StringIO())
    assert code == 0
    return json.loads((tmp / "report.json").read_text())


def _want() -> dict[str, int]:
    """The toy figure worked out from the replay's lines."""
    lines = [json.loads(x) for x in REPLAY.read_text("utf-8").splitlines()[1:]]
    out: dict[str, int] = {}
    for rec in lines:
        if "arms" not in rec:
            continue  # the end line
        for key, arm in rec["arms"].items():
            out[key] = out.get(key, 0) + len(arm.get("text") or "")
    return out


def test_a_toy_figure_reaches_report_json_in_one_process_and_in_two(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toy: list[int]) -> None:
    one = _report_json(tmp_path / "one", "1", monkeypatch)
    assert toy == []  # one process: nothing merged
    two = _report_json(tmp_path / "two", "2", monkeypatch)
    assert len(toy) == 1 and 0 < toy[0] < one["n"]  # the worker scored part of the items
    want = _want()
    assert one["text_chars"] == two["text_chars"] == {k: want[k] for k in one["arms"]}
    assert all(one["text_chars"].values())
    assert {k: v for k, v in one.items() if k != "source"} == \
        {k: v for k, v in two.items() if k != "source"}


def test_the_merge_follows_the_fields() -> None:
    """Two tallies over disjoint positions merge into the tally of both."""
    def tally(positions: list[int]) -> Tally:
        t = Tally.new(Size(6, 2, digests=True), auditor=None)
        t.finish, t.shown = Lowest(3), Lowest(2)
        for pos in positions:
            t.held[pos] = t.scored[pos] = True
            t.valid[pos], t.right[pos], t.digests[pos] = [pos, -1], [pos % 2, 1], [b"d", b""]
            t.finish.put(pos, bytes([pos, 0]))
            t.shown.put(pos, f"item {pos}")
        t.excluded[positions[-1]] = "why"
        t.no_arm = (positions[0], f"lacks at {positions[0]}")
        return t

    whole, a, b = tally([0, 1, 3, 4]), tally([0, 4]), tally([1, 3])
    a.merge(b.state())
    for name in ("held", "scored", "valid", "right", "digests", "events"):
        assert np.array_equal(getattr(a, name), getattr(whole, name)), name
    assert a.excluded == {4: "why", 3: "why"} and a.no_arm == (0, "lacks at 0")
    assert a.finish.items == {0: bytes([0, 0]), 1: bytes([1, 0]), 3: bytes([3, 0])}
    assert a.shown.items == {0: "item 0", 1: "item 1"}


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_shards_items_are_built_from_their_own_rows(
        monkeypatch: pytest.MonkeyPatch, processes: str) -> None:
    """A shard job scores every count-th item (config's shard.take): each is built from
    its own task row (its gold), so its states are the whole run's for those items."""
    monkeypatch.setenv(parallel.ENV, processes)
    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = [parse_arm(k) for k in ("unconstrained", "prompt_json[answer]")]

    def scored(take: Any = None) -> Any:
        return score_stream(task, open_replay(REPLAY), arms, None, io.StringIO(), take).states

    whole, shard = scored(), scored(lambda ids: ids[1::3])
    assert shard.ids == whole.ids[1::3] and shard.right.any()
    rows = [whole.ids.index(i) for i in shard.ids]
    assert np.array_equal(shard.right, whole.right[rows])
    assert np.array_equal(shard.valid, whole.valid[rows])


def test_items_past_the_first_positions_are_shown_when_earlier_ones_are_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass builds what the reports show at once for the first `detailed` positions
    only; past them an item is kept as read and built once it is known to be shown, as
    here where the replay lacks the task's first five items."""
    monkeypatch.setenv(parallel.ENV, "1")
    lines = REPLAY.read_text("utf-8").splitlines(keepends=True)
    path = tmp_path / "replay.jsonl"
    path.write_text("".join([lines[0], *lines[6:]]), "utf-8")
    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = [parse_arm(k) for k in ("unconstrained", "constrained[answer]")]

    def shown(detailed: int) -> dict[str, Any]:
        return score_stream(task, open_replay(path), arms, None, io.StringIO(),
                            showing=Showing(listed=detailed, detailed=detailed,
                                            limit=100)).shown

    late, early = shown(3), shown(10)
    assert list(late) == list(early)[:3] == [f"gsm8k_test_{i}" for i in (5, 6, 7)]
    assert all(type(s) is Shown and s.error is None for s in late.values())
    assert late == {k: early[k] for k in late}
