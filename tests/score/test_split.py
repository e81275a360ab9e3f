"""Scoring in two processes (vbw.score.split) gives what one process gives: the states,
the task checks, the errors; and a failed worker only costs time."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.errors import ReplayError
from vbw.replay.stream import open_replay
from vbw.score import split, stream
from vbw.score.shown import Showing
from vbw.score.stream import Scored, score_stream
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import Task, load_task

KEEP = Showing(listed=150, detailed=120, limit=60)  # past the parent's first runs
REPLAYS = {"gsm8k": "replays/gsm8k/smollm2_135m/llamacpp.jsonl",
           "bfcl_simple": "replays/bfcl_simple/smollm2_135m/outlines.jsonl"}


@pytest.fixture
def slow_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process reads each run of lines 2 ms late, so the worker, which claims runs
    from the back as this process claims them from the front, surely gets some."""
    parent, real = os.getpid(), split._read

    def slow(p: Any, stream: Any) -> Any:
        if os.getpid() == parent:
            time.sleep(0.002)
        return real(p, stream)

    monkeypatch.setattr(split, "_read", slow)


def _score(task: Task, path: Path, processes: str, monkeypatch: pytest.MonkeyPatch) -> Scored:
    monkeypatch.setenv(split.ENV, processes)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    return score_stream(task, open_replay(path), arms, None, io.StringIO(), showing=KEEP)


def _same(a: Scored, b: Scored) -> None:
    assert a.audit == b.audit and a.missing == b.missing and a.n_task == b.n_task
    assert a.timings == b.timings and a.end == b.end
    sa, sb = a.states, b.states
    assert (sa.ids, sa.excluded, sa.excluded_reasons) == (sb.ids, sb.excluded,
                                                         sb.excluded_reasons)
    assert np.array_equal(sa.valid, sb.valid) and np.array_equal(sa.right, sb.right)
    assert np.array_equal(sa.events, sb.events)
    assert a.finishes == b.finishes and a.shown == b.shown  # kept for the reports


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items each merged worker state held (a worker that failed merges none)."""
    seen: list[int] = []
    real = stream.Pass.merge

    def spy(self: Any, st: dict[str, Any]) -> None:
        seen.append(int(st["tally"]["held"].sum()))
        real(self, st)

    monkeypatch.setattr(stream.Pass, "merge", spy)
    return seen


@pytest.mark.parametrize("task_name", list(REPLAYS))
def test_two_processes_score_as_one(task_name: str, monkeypatch: pytest.MonkeyPatch,
                                    merges: list[int], slow_parent: None) -> None:
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    one = _score(task, ROOT / REPLAYS[task_name], "1", monkeypatch)
    assert merges == []
    two = _score(task, ROOT / REPLAYS[task_name], "2", monkeypatch)
    assert len(merges) == 1 and 0 < merges[0] < 200  # the runs the worker claimed
    _same(one, two)


def test_a_failed_worker_leaves_the_parent_to_score_its_items(
        monkeypatch: pytest.MonkeyPatch, merges: list[int]) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    one = _score(task, ROOT / REPLAYS["gsm8k"], "1", monkeypatch)

    def broken(self: Any) -> dict[str, Any]:
        raise RuntimeError("the worker fails")

    monkeypatch.setattr(stream.Pass, "state", broken)
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


def _variant(tmp_path: Path, edit: Any) -> Path:
    """The gsm8k replay with its lines (header first) changed by `edit`."""
    lines = (ROOT / REPLAYS["gsm8k"]).read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "variant.jsonl"
    path.write_text("".join(edit(lines)), encoding="utf-8")
    return path


def _errors(task: Task, path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    errors = []
    for processes in ("1", "2"):
        with pytest.raises(ReplayError) as e:
            _score(task, path, processes, monkeypatch)
        errors.append(str(e.value))
    return errors


def _bad_json(lines: list[str], i: int) -> None:
    lines[i] = lines[i][:40] + "\n"


@pytest.mark.parametrize("first,second", [(8, 60), (8, 160), (160, 9), (150, 170)])
def test_the_first_bad_line_wins_whichever_process_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: int, second: int) -> None:
    """Line numbers `first` (bad JSON) and `second` (a bad record): lines in the first
    and the second half of the file are read by different processes, neither of which
    decodes the other's."""
    def edit(lines: list[str]) -> list[str]:
        _bad_json(lines, first - 1)
        lines[second - 1] = lines[second - 1].replace('"id"', '"idd"', 1)
        return lines

    task = load_task(TASK_CONF / "gsm8k.yaml")
    errors = _errors(task, _variant(tmp_path, edit), monkeypatch)
    assert errors[0] == errors[1] and f":{min(first, second)}:" in errors[0]


@pytest.mark.parametrize("where", [6, 150])
def test_an_id_repeated_across_the_two_halves_is_the_same_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: int) -> None:
    """Line 2's id again on line 6 (the parent's, as line 2) or 150 (the worker's)."""
    def edit(lines: list[str]) -> list[str]:
        lines[where - 1] = lines[1]
        return lines

    task = load_task(TASK_CONF / "gsm8k.yaml")
    errors = _errors(task, _variant(tmp_path, edit), monkeypatch)
    assert errors[0] == errors[1] and f":{where}: item id" in errors[0]


@pytest.mark.parametrize("torn", [False, True])
def test_the_end_line_and_a_torn_tail_read_by_the_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, merges: list[int],
        torn: bool, slow_parent: None) -> None:
    """One item line fewer puts the end marker on line 201 (in the last run of lines,
    the worker's first claim, numbered on from the runs before it); or, in its place, a
    torn last line."""
    def edit(lines: list[str]) -> list[str]:
        del lines[100]
        return lines[:-1] + ['{"id": "gsm8k_te'] if torn else lines

    task = load_task(TASK_CONF / "gsm8k.yaml")
    path = _variant(tmp_path, edit)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    results = []
    for processes in ("1", "2"):
        monkeypatch.setenv(split.ENV, processes)
        replay = open_replay(path)
        results.append((score_stream(task, replay, arms, None, io.StringIO()),
                        replay.torn_tail))
    (one, one_torn), (two, two_torn) = results
    _same(one, two)
    assert len(merges) == 1 and 0 < merges[0] < 199
    assert one_torn == two_torn == torn and (one.end is None) == torn
    assert len(one.timings) == 199


def test_neither_process_decodes_the_others_lines(monkeypatch: pytest.MonkeyPatch,
                                                  slow_parent: None) -> None:
    """The parent decodes the header and the lines of the runs it claimed, no more (the
    worker, a forked process, counts its own): runs of lines counted apart from vbw."""
    from vbw.replay import stream as replay_stream

    calls, claimed = [], []
    real, claim = replay_stream.decode, split._Claims.claim

    def counted(line: bytes) -> Any:
        calls.append(1)
        return real(line)

    def logged(self: Any, front: bool, worker: Any = None) -> int | None:
        part = claim(self, front, worker)
        if front and part is not None:
            claimed.append(part)
        return part

    path = ROOT / REPLAYS["gsm8k"]
    cuts = open_replay(path).cuts(split.PARTS)  # (before decodes are counted)
    monkeypatch.setattr(replay_stream, "decode", counted)
    monkeypatch.setattr(split._Claims, "claim", logged)
    task = load_task(TASK_CONF / "gsm8k.yaml")
    _score(task, path, "2", monkeypatch)
    data = path.read_bytes()
    mine = sum(len([x for x in data[cuts[i]:cuts[i + 1]].splitlines() if x.strip()])
               for i in claimed)
    assert len(calls) == 1 + mine and 0 < mine < 201  # 201 lines after the header


def test_compare_passes_split_as_one(monkeypatch: pytest.MonkeyPatch,
                                     merges: list[int], slow_parent: None) -> None:
    """mode=compare's passes (digests, one audit shared by the replays, each item checked
    once) in two processes: the same states, digests and shared task checks."""
    from vbw.score.shared import SharedAudit

    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    paths = [ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl",
             ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl",
             ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"]
    runs = []
    for processes in ("1", "2"):
        monkeypatch.setenv(split.ENV, processes)
        shared = SharedAudit(task, None)
        scored = [score_stream(task, open_replay(p), arms, None, io.StringIO(),
                               shared=shared, digests=True) for p in paths]
        runs.append((scored, shared.result()))
    assert len(merges) == 3 and all(merges)
    (one, one_audit), (two, two_audit) = runs
    for a, b in zip(one, two):
        _same(a, b)
        assert np.array_equal(a.digests, b.digests)
    assert one_audit == two_audit and one_audit.items == 200


def test_arm_keys_of_a_legacy_replay_in_two_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mode=compare reads a validbutwrong 0.1 replay's arm keys from its lines: the same
    keys, and the same first error, in one process or two."""
    legacy = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    keys = []
    for processes in ("1", "2"):
        monkeypatch.setenv(split.ENV, processes)
        keys.append(split.arm_keys(legacy))
    assert keys[0] == keys[1] and len(keys[0]) == 6
    lines = legacy.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[40] = lines[3]  # line 41 repeats line 4's id (of another run of lines)
    lines[9] = lines[9][:30] + "\n"  # and line 10 is cut short
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")
    errors = []
    for processes in ("1", "2"):
        monkeypatch.setenv(split.ENV, processes)
        with pytest.raises(ReplayError) as e:
            split.arm_keys(bad)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and ":10: not valid JSON" in errors[0]
    lines[9] = lines[8]
    bad.write_text("".join(lines[:9] + lines[10:]), encoding="utf-8")  # only the repeat
    monkeypatch.setenv(split.ENV, "2")
    with pytest.raises(ReplayError, match=r":40: item id .* appears twice"):
        split.arm_keys(bad)


def test_claims_give_every_run_once_to_one_of_two_processes() -> None:
    """_Claims: this process from the front, a forked one from the back, at uneven
    paces: every run is claimed once, the two sides meet without a gap."""
    from vbw.pipes import beside

    claims = split._Claims(50)

    def back() -> list[int]:
        got = []
        while (i := claims.claim(False)) is not None:
            got.append(i)
            time.sleep(0.001 * (i % 3))
        return got

    worker = beside(back)
    front = []
    while (i := claims.claim(True, worker)) is not None:
        front.append(i)
        time.sleep(0.001 * (i % 2))
    theirs = worker.result()
    claims.close()
    assert front == list(range(len(front))) and theirs == list(range(49, len(front) - 1, -1))
    assert front and theirs


def test_a_worker_gone_holding_the_token_is_noticed() -> None:
    """A worker killed between taking the claims' token and giving it back: this
    process raises (and scores in one process) instead of waiting for ever."""
    from vbw.pipes import beside

    claims = split._Claims(8)

    def dies_holding_it() -> None:
        os.read(claims._take, 1)
        os.kill(os.getpid(), 9)

    worker = beside(dies_holding_it)
    time.sleep(0.2)
    with pytest.raises(RuntimeError, match="token"):
        claims.claim(True, worker)
    worker.cancel()
    claims.close()


def test_a_stopped_worker_makes_the_parent_score_alone(monkeypatch: pytest.MonkeyPatch,
                                                        merges: list[int]) -> None:
    """Issue 30 item 15: a SIGSTOPped worker hung its parent forever (waiting for its
    result, or for the claims' token it held); the parent now scores the replay alone,
    with the same result."""
    import signal

    task = load_task(TASK_CONF / "gsm8k.yaml")
    one = _score(task, ROOT / REPLAYS["gsm8k"], "1", monkeypatch)
    parent, real = os.getpid(), stream.Pass.forked

    def stops(self: Any) -> None:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGSTOP)
        real(self)

    monkeypatch.setattr(stream.Pass, "forked", stops)
    start = time.perf_counter()
    two = _score(task, ROOT / REPLAYS["gsm8k"], "2", monkeypatch)
    assert time.perf_counter() - start < 30
    assert merges == []
    _same(one, two)


def test_a_worker_stopped_holding_the_token_is_not_waited_for() -> None:
    import signal

    from vbw.pipes import beside

    claims = split._Claims(4)

    def takes_and_stops() -> None:
        os.read(claims._take, 1)
        os.kill(os.getpid(), signal.SIGSTOP)

    worker = beside(takes_and_stops)
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="the scoring worker is stopped"):
        while claims.claim(True, worker) is not None:
            time.sleep(0.01)
    assert time.perf_counter() - start < 10
    worker.cancel()
    claims.close()


def test_a_replay_truncated_while_two_processes_score_it_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 item 15: each run of lines is read by its own open of the file, so a
    replay truncated mid-way gave a view no version of it had; the change is one line."""
    task = load_task(TASK_CONF / "gsm8k.yaml")
    path = tmp_path / "r.jsonl"
    data = (ROOT / REPLAYS["gsm8k"]).read_bytes()
    path.write_bytes(data)
    parent, real = os.getpid(), split._read
    cut = [False]

    def truncating(p: Any, part: Any) -> Any:
        if os.getpid() == parent and not cut[0]:
            cut[0] = True
            with open(path, "r+b") as f:
                f.truncate(len(data) // 2)
        return real(p, part)

    monkeypatch.setattr(split, "_read", truncating)
    with pytest.raises(ReplayError, match=r"r.jsonl: the replay changed while it was scored"):
        _score(task, path, "2", monkeypatch)
    path.write_bytes(data)  # unchanged: scored as before
    cut[0] = True
    _same(_score(task, path, "2", monkeypatch), _score(task, path, "1", monkeypatch))
