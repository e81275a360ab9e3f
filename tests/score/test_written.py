"""vbw.score.written: mode=merge scores the merged records as it writes them; what that
gives is what scoring the written file gives, in one process or two, and a pass that
fails on the way is dropped (the file is then scored by reading it)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.modes.test_merge import GSM8K, _edit, shards
from tests.same import assert_same_scored
from vbw.replay.stream import open_replay
from vbw.score.shown import Showing
from vbw.score.stream import Pass, Scored, score_stream
from vbw.score.written import Written
from vbw.modes.merge.write import merge_and_score
from vbw.task.arms import ARM_KINDS, task_arms

KEEP = Showing(listed=5, detailed=3, limit=40)  # what the pass keeps for the reports
ARMS = task_arms(GSM8K.schema_names, GSM8K.spec.answer_schema, list(ARM_KINDS))


def _timed_shards(sweep: Path, count: int) -> None:
    """`count` shards of a 7-item run, each item with its own timing (file order shows)."""
    for i, folder in enumerate(shards(sweep, count)):
        for r in range(len(range(i, 7, count))):
            _edit(folder / "replay.jsonl", record=r, item_seconds=1.5 + i + r * count)


def _merged(tmp: Path, out: Path) -> tuple[Path, Written | None]:
    def scoring(n: int) -> Written:
        return Written(Pass(GSM8K, GSM8K.ids(n), ARMS, showing=KEEP), str(out / "replay.jsonl"))

    out.mkdir()
    return merge_and_score(GSM8K, [str(tmp)], None, tmp, out, scoring)


def _scored(path: Path, written: Written | None) -> Scored:
    stream = open_replay(path)
    if written is not None:
        stream.end = written.end
    return score_stream(GSM8K, stream, ARMS, stream.header.n, io.StringIO(), showing=KEEP,
                        given=None if written is None else written.p)


def _same(a: Scored, b: Scored) -> None:
    assert_same_scored(a, b)
    assert len(set(a.timings)) == len(a.timings)  # the shards' timings all kept, in order
    assert len(a.finishes) == KEEP.listed and len(a.shown) == KEEP.detailed


@pytest.mark.parametrize("processes", ["1", "2"])
@pytest.mark.parametrize("count", [2, 3])
def test_the_written_pass_is_the_read_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          processes: str, count: int) -> None:
    monkeypatch.setenv("VBW_PROCESSES", processes)
    _timed_shards(tmp_path / "sweep", count)
    path, written = _merged(tmp_path / "sweep", tmp_path / "m")
    assert written is not None and written.end is not None
    _same(_scored(path, written), _scored(path, None))


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_pass_that_fails_is_dropped_and_the_file_is_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: str) -> None:
    """A record the pass cannot take (here the fourth item's, in whichever process makes
    it) drops the pass; the merged replay is the one written without a pass."""
    monkeypatch.setenv("VBW_PROCESSES", processes)
    shards(tmp_path / "sweep", 2)
    real = Written.add

    def add(self: Written, rec: dict, lineno: int, item=None) -> None:
        if rec["id"] == "gsm8k_test_3":
            raise RuntimeError("cannot")
        real(self, rec, lineno, item)

    monkeypatch.setattr(Written, "add", add)
    path, written = _merged(tmp_path / "sweep", tmp_path / "m")
    assert written is None
    monkeypatch.setattr(Written, "add", real)
    plain = tmp_path / "plain"
    plain.mkdir()
    again, _ = merge_and_score(GSM8K, [str(tmp_path / "sweep")], None, tmp_path, plain)
    assert path.read_bytes() == again.read_bytes()


def test_a_pass_of_other_arms_is_not_taken(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """score_stream takes a written pass only for its own selection and arms; another
    one leaves it to read the file."""
    monkeypatch.setenv("VBW_PROCESSES", "1")
    _timed_shards(tmp_path / "sweep", 2)
    path, _ = _merged(tmp_path / "sweep", tmp_path / "m")
    stream = open_replay(path)
    other = Pass(GSM8K, GSM8K.ids(stream.header.n), ARMS[:2])
    scored = score_stream(GSM8K, stream, ARMS, stream.header.n, io.StringIO(),
                          showing=KEEP, given=other)
    _same(scored, _scored(path, None))
