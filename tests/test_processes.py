"""The one equivalence harness for vbw's use of several processes (vbw.parallel): each
case runs the same job with VBW_PROCESSES=1 and =2 (forced, on these small inputs) and
must give the same outcome (results, output, files, or the same one-line error), and
with =2 at least one child process must have been started. A case is a function of a
fresh folder returning what is compared."""

from __future__ import annotations

import functools
import json
import io
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import pytest

from tests.conftest import REPLAYS, ROOT, TASK_CONF, run_vbw
from vbw import parallel
from vbw.errors import VbwError
from vbw.modes.scoring import _run_tasks
from vbw.replay.stream import open_replay
from vbw.score import split
from vbw.score.stream import Scored, SharedAudit, score_stream
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import Task, load_task

GSM8K = ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl"
BFCL = ROOT / "replays/bfcl_simple/smollm2_135m/outlines.jsonl"


def _task(name: str = "gsm8k") -> Task:
    return load_task(TASK_CONF / f"{name}.yaml")


def _seen(s: Scored) -> tuple[Any, ...]:
    """What a scored replay shows: every field of Scored, arrays as lists."""
    st = s.states
    return (s.audit, s.missing, s.n_task, s.timings, s.end, st.ids, st.excluded,
            st.excluded_reasons, st.valid.tolist(), st.right.tolist(),
            None if s.digests is None else s.digests.tolist())


def _scored(path: Path, name: str = "gsm8k") -> tuple[Any, ...]:
    task = _task(name)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    replay = open_replay(path)
    return _seen(score_stream(task, replay, arms, None, io.StringIO())), replay.torn_tail


def _variant(tmp: Path, edit: Callable[[list[str]], list[str] | None]) -> Path:
    """The gsm8k replay with its lines (header first) changed by `edit`."""
    lines = GSM8K.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp / "variant.jsonl"
    path.write_text("".join(edit(lines) or lines), encoding="utf-8")
    return path


def _set(lines: list[str], **at: str) -> None:
    for i, text in at.items():
        lines[int(i[1:])] = text


def _compare(tmp: Path) -> Any:
    """mode=compare's passes: digests, one audit shared by three replays."""
    task = _task()
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    shared = SharedAudit(task, None)
    paths = [GSM8K, ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl",
             ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"]
    scored = [_seen(score_stream(task, open_replay(p), arms, None, io.StringIO(),
                                 shared=shared, digests=True)) for p in paths]
    return scored, shared.result()


def _legacy_keys(tmp: Path, edit: Callable[[list[str]], None] | None = None) -> Any:
    """mode=compare's read of a validbutwrong 0.1 replay's arm keys (vbw.score.split)."""
    legacy = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    lines = legacy.read_text(encoding="utf-8").splitlines(keepends=True)
    if edit:
        edit(lines)
    path = tmp / "legacy.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return sorted(split.arm_keys(path))


def _tasks(tmp: Path, fail: str | None = None) -> Any:
    """Three tasks that print to both streams and write a file each (vbw.modes.scoring's
    task runner); `fail` ("b/child", "c/parent"...) fails that task in that process."""
    parent = os.getpid()
    shared: list[str] = []

    class Terminal(io.StringIO):
        def write(self, s: str) -> int:
            shared.append(s)
            return super().write(s)

    def run(task: str, out: TextIO, err: TextIO) -> str:
        print(f"{task}: first", file=out)
        print(f"{task}: warning", file=err, flush=True)
        where = "parent" if os.getpid() == parent else "child"
        if fail == f"{task}/{where}":
            raise RuntimeError(f"{task} fails")
        (tmp / task).mkdir(parents=True, exist_ok=True)
        (tmp / task / "report.md").write_text(f"{task} report", encoding="utf-8")
        print(f"{task}: md", file=out)
        return f"{task} value"

    out, err = Terminal(), Terminal()
    try:
        values: Any = _run_tasks(["a", "b", "c"], run, lambda t: tmp / t, out, err, True)
    except RuntimeError as e:
        values = str(e)
    files = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file())
    return values, out.getvalue(), err.getvalue(), shared, files


def _page(tmp: Path) -> str:
    """report.html's item data, built beside in a child where scoring splits
    (vbw.report.pagedata)."""
    from vbw.report.html import browser_json
    from vbw.report.pagedata import ItemData
    from vbw.score.metrics import build_report

    task = _task()
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    from vbw.report.browser import MAX_TEXT_CHARS
    from vbw.score.shown import Showing

    show = Showing(listed=40, detailed=7, limit=MAX_TEXT_CHARS)
    scored = score_stream(task, open_replay(GSM8K), arms, None, io.StringIO(), showing=show)
    states = scored.states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(GSM8K), provenance="", seed=1, resamples=100,
                          n_task=len(states.ids) + len(states.excluded), missing=[])
    page = ItemData(task, open_replay(GSM8K).header, arms, max_detailed=7, max_listed=40)
    (page.start if split.wanted(GSM8K) else page.keep)(scored)
    return "".join(browser_json(page.browser(report)))


@functools.lru_cache(maxsize=None)
def _sweep() -> Path:
    """Four shard replays of one scripted live run (made once)."""
    from tests.modes.test_merge import shards

    sweep = Path(tempfile.mkdtemp()) / "sweep"
    shards(sweep, 4)
    return sweep


def _merged(tmp: Path, bad: int | None = None, other: tuple[int, ...] = ()) -> bytes:
    """mode=merge's replay of the shards (read, and its halves made, on several cores);
    `bad`: that shard's first line is not JSON; `other`: the k-th item lines (of the whole
    run, in task order) whose prompt hash is not the task's."""
    from tests.modes.test_merge import GSM8K as TASK
    from vbw.modes.merge.write import merged_replay

    sweep = shutil.copytree(_sweep(), tmp / "sweep")
    if bad is not None:
        path = sweep / f"s{bad}" / "replay.jsonl"
        head, rest = path.read_text(encoding="utf-8").split("\n", 1)
        path.write_text(f"{head}\nnot json\n{rest}", encoding="utf-8")
    shards = sorted(sweep.glob("s*/replay.jsonl"))
    for k in other:  # item k is in shard k % count, its (k // count + 1)-th line
        path = shards[k % len(shards)]
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        rec = json.loads(lines[k // len(shards) + 1])
        lines[k // len(shards) + 1] = json.dumps({**rec, "prompt_hash": "0" * 64}) + "\n"
        path.write_text("".join(lines), encoding="utf-8")
    merged_replay(TASK, [str(sweep)], None, tmp, tmp)
    return (tmp / "replay.jsonl").read_bytes().replace(str(tmp).encode(), b"<tmp>")


CASES: dict[str, Callable[[Path], Any]] = {
    "score gsm8k": lambda tmp: _scored(GSM8K),
    "score bfcl_simple": lambda tmp: _scored(BFCL, "bfcl_simple"),
    "bad JSON before a bad record": lambda tmp: _scored(_variant(tmp, lambda ls: _set(
        ls, l8=ls[8][:40] + "\n", l160='{"id": "gsm8k_test_0", "arms": {}}\n'))),
    "a bad record before bad JSON": lambda tmp: _scored(_variant(tmp, lambda ls: _set(
        ls, l9='{"id": "gsm8k_test_0", "arms": {}}\n', l160=ls[160][:40] + "\n"))),
    "an id repeated across the halves": lambda tmp: _scored(_variant(tmp, lambda ls: _set(
        ls, l149=ls[1]))),
    "the end line moved up": lambda tmp: _scored(_variant(tmp, lambda ls: ls[:100] + ls[101:])),
    "a torn last line": lambda tmp: _scored(_variant(
        tmp, lambda ls: ls[:100] + ls[101:-1] + ['{"id": "gsm8k_te'])),
    "compare's shared passes": _compare,
    "a legacy replay's arm keys": _legacy_keys,
    "a legacy replay cut short": lambda tmp: _legacy_keys(tmp, lambda ls: _set(
        ls, l40=ls[3], l9=ls[9][:30] + "\n")),
    "tasks in order": _tasks,
    "a task failing in the child": lambda tmp: _tasks(tmp, "c/child"),
    "a task failing in the parent": lambda tmp: _tasks(tmp, "a/parent"),
    "report.html's item data": _page,
    "mode=merge's replay": _merged,
    "a bad line in a later shard": lambda tmp: _merged(tmp, 3),
    "a bad line in an earlier shard": lambda tmp: _merged(tmp, 1),
    "other prompts in the merge's second half": lambda tmp: _merged(tmp, other=(6,)),
    "other prompts in both halves": lambda tmp: _merged(tmp, other=(1, 6)),
}


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The child processes started (by this process)."""
    seen: list[int] = []
    real = parallel.Child.__init__

    def counted(self: parallel.Child, work: Callable[[], Any]) -> None:
        real(self, work)
        seen.append(self.pid)

    monkeypatch.setattr(parallel.Child, "__init__", counted)
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)
    return seen


def _outcome(case: Callable[[Path], Any], tmp: Path) -> Any:
    tmp.mkdir()
    try:
        return case(tmp)
    except VbwError as e:
        return type(e).__name__, str(e).replace(str(tmp), "<tmp>")


@pytest.mark.parametrize("name", list(CASES))
def test_one_and_two_processes_give_the_same(name: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             started: list[int]) -> None:
    got = {}
    for n in ("1", "2"):
        monkeypatch.setenv(parallel.ENV, n)
        got[n] = _outcome(CASES[name], tmp_path / n)
        assert bool(started) == (n == "2")
    assert got["1"] == got["2"]


def _vbw(tmp: Path, processes: str, *args: str) -> tuple[int, str, str, dict[str, bytes]]:
    out = tmp / f"run{processes}"
    proc = run_vbw(*args, f"hydra.run.dir={out}", cwd=tmp, env={parallel.ENV: processes})
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
             if p.is_file() and ".hydra" not in p.parts and not p.name.startswith(".")}
    return (proc.returncode, proc.stdout.replace(str(out), "RUN"),
            proc.stderr.replace(str(out), "RUN"), files)


def test_the_demo_with_a_tripped_gate(tmp_path: Path) -> None:
    """`vbw` as a user runs it (the warm worker, the two tasks side by side)."""
    one = _vbw(tmp_path, "1", "gate.wrong_valid_above=0.5")
    assert _vbw(tmp_path, "2", "gate.wrong_valid_above=0.5") == one
    code, out, err, files = one
    assert code == 1 and "vbw: gate tripped" in err and len(files) == 12
    assert out.index("# vbw report: bfcl_simple") < out.index("# vbw report: gsm8k") \
        < out.index("Reports written to RUN")


def test_an_error_in_the_second_task(tmp_path: Path) -> None:
    """gsm8k's replay (the second task's) has a broken line: the same one line, exit 2,
    and only bfcl_simple's reports."""
    user = tmp_path / "replays"
    for task in ("bfcl_simple", "gsm8k"):
        shutil.copytree(REPLAYS / task / "qwen2_5_0_5b", user / task / "qwen2_5_0_5b")
    broken = user / "gsm8k" / "qwen2_5_0_5b" / "outlines.jsonl"
    lines = broken.read_text(encoding="utf-8").splitlines(keepends=True)
    broken.write_text("".join(lines[:5] + ["{not json\n"] + lines[5:]), encoding="utf-8")
    args = ("mode=replay", f"replays_dir={user}")
    one = _vbw(tmp_path, "1", *args)
    assert _vbw(tmp_path, "2", *args) == one
    code, _, err, files = one
    assert code == 2 and len(err.splitlines()) == 1 and "outlines.jsonl" in err, err
    assert sorted(files) == sorted(f"bfcl_simple/{n}" for n in (
        "answers.csv", "ledger.csv", "quadrants.svg", "report.html", "report.json",
        "report.md"))


@pytest.mark.parametrize(("other", "first"), [((6,), 6), ((1, 6), 1)])
def test_the_merge_refuses_other_prompts_first_in_task_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: tuple[int, ...],
        first: int) -> None:
    """Item 6 is in the merge's second half (the child's, with two processes): its prompt
    hash is refused there as here; with item 1 too, item 1 (the parent's) is named."""
    monkeypatch.setenv(parallel.ENV, "2")
    with pytest.raises(VbwError, match=rf"item gsm8k_test_{first}: prompt_hash is 0000"):
        _merged(tmp_path, other=other)
    assert not list(tmp_path.glob(".replay.jsonl.part*"))
    assert not (tmp_path / "replay.jsonl").exists()
