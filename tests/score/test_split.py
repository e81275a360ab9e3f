"""Scoring in two processes (vbw.score.split) gives what one process gives: the states,
the task checks, the errors; and a failed worker only costs time."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.errors import ReplayError
from vbw.replay.stream import open_replay
from vbw.score import split, stream
from vbw.score.stream import Scored, score_stream
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import Task, load_task

REPLAYS = {"gsm8k": "replays/gsm8k/smollm2_135m/llamacpp.jsonl",
           "bfcl_simple": "replays/bfcl_simple/smollm2_135m/outlines.jsonl"}


def _score(task: Task, path: Path, processes: str, monkeypatch: pytest.MonkeyPatch) -> Scored:
    monkeypatch.setenv(split.ENV, processes)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    return score_stream(task, open_replay(path), arms, None, io.StringIO())


def _same(a: Scored, b: Scored) -> None:
    assert a.audit == b.audit and a.missing == b.missing and a.n_task == b.n_task
    assert a.timings == b.timings and a.end == b.end
    sa, sb = a.states, b.states
    assert (sa.ids, sa.excluded, sa.excluded_reasons) == (sb.ids, sb.excluded,
                                                         sb.excluded_reasons)
    assert np.array_equal(sa.valid, sb.valid) and np.array_equal(sa.right, sb.right)


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items each merged worker state held (a worker that failed merges none)."""
    seen: list[int] = []
    real = stream._Pass.merge

    def spy(self: Any, st: dict[str, Any]) -> None:
        seen.append(int(st["held"].sum()))
        real(self, st)

    monkeypatch.setattr(stream._Pass, "merge", spy)
    return seen


@pytest.mark.parametrize("task_name", list(REPLAYS))
def test_two_processes_score_as_one(task_name: str, monkeypatch: pytest.MonkeyPatch,
                                    merges: list[int]) -> None:
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    one = _score(task, ROOT / REPLAYS[task_name], "1", monkeypatch)
    assert merges == []
    two = _score(task, ROOT / REPLAYS[task_name], "2", monkeypatch)
    assert merges == [100]  # the worker scored every other one of the 200 items
    _same(one, two)


def test_a_failed_worker_leaves_the_parent_to_score_its_items(
        monkeypatch: pytest.MonkeyPatch, merges: list[int]) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    one = _score(task, ROOT / REPLAYS["gsm8k"], "1", monkeypatch)

    def broken(self: Any) -> dict[str, Any]:
        raise RuntimeError("the worker fails")

    monkeypatch.setattr(stream._Pass, "state", broken)
    two = _score(task, ROOT / REPLAYS["gsm8k"], "2", monkeypatch)
    assert merges == []
    _same(one, two)


def test_a_bad_line_is_the_same_error_in_two_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (ROOT / REPLAYS["gsm8k"]).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[150] = '{"id": "gsm8k_test_0", "arms": {}}\n'  # a repeated id, late in the file
    lines[7] = lines[7].replace('"id"', '"idd"', 1)   # and an earlier line lacking its id
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    task = load_task(TASK_CONF / "gsm8k.yaml")
    errors = []
    for processes in ("1", "2"):
        with pytest.raises(ReplayError) as e:
            _score(task, path, processes, monkeypatch)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and ":8:" in errors[0]


def test_only_large_replays_are_split_by_default(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(split.ENV, raising=False)
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_text(json.dumps({"meta": {}}) + "\n")
    with open(large, "wb") as f:
        f.truncate(split.SPLIT_BYTES)
    assert not split.wanted(small)
    assert split.wanted(large) == ((split.os.cpu_count() or 1) >= 2)
    monkeypatch.setenv(split.ENV, "1")
    assert not split.wanted(large)
