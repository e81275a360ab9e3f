"""report.html's detailed items built by a forked child while the report is built
(vbw.report.pagedata): the page is the one-process page, whether the child delivers,
fails or is cancelled, and nothing is left running."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw import pipes
from vbw.replay.stream import open_replay
from vbw.report import listing as listing_module
from vbw.report import pagedata
from vbw.report.listing import build_browser
from vbw.report.html import browser_json
from vbw.report.pagedata import ItemData
from vbw.score.metrics import build_report
from vbw.score.model import Report
from vbw.score.states import ItemStates
from vbw.score.stream import score_stream
from vbw.task.arms import ARM_KINDS, Arm, task_arms
from vbw.task.runner import Task, load_task

PATH = REPLAYS / "gsm8k" / "smollm2_135m" / "outlines.jsonl"
CAPS = {"max_detailed": 7, "max_listed": 40}  # details, plain rows and unlisted items


def _scored() -> tuple[Task, list[Arm], ItemStates, Report]:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    states = score_stream(task, open_replay(PATH), arms, None, io.StringIO()).states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(PATH), provenance="", seed=1, resamples=100,
                          n_task=len(states.ids) + len(states.excluded), missing=[])
    return task, arms, states, report


def _one_process(task: Task, arms: list[Arm], report: Report) -> str:
    stream = open_replay(PATH)
    b = build_browser(report, task, stream.header, (o for _, o in stream.lines()), arms, **CAPS)
    assert len(b.items) == 7 and len(b.rows) == 33 and b.unlisted == report.n - 40
    return "".join(browser_json(b))


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What each assembled page took from the child (None: built here)."""
    seen: list[Any] = []
    real = pagedata.assemble

    def spy(*args: Any) -> Any:
        seen.append(args[-1])
        return real(*args)

    monkeypatch.setattr(pagedata, "assemble", spy)
    return seen


def test_the_childs_items_make_the_one_process_page(taken: list[Any]) -> None:
    task, arms, states, report = _scored()
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(states)
    b = page.browser(report)
    assert len(taken[0]) == 7 and b.items == [] and len(b.encoded) == 7  # from the child
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_without_a_child_the_items_are_built_here(taken: list[Any]) -> None:
    task, arms, states, report = _scored()
    b = ItemData(task, PATH, arms, **CAPS).browser(report)  # start() was not called
    assert taken == [None] and len(b.items) == 7
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_a_failing_child_costs_only_its_work(monkeypatch: pytest.MonkeyPatch,
                                              taken: list[Any]) -> None:
    task, arms, states, report = _scored()

    def fails(*args: Any) -> list[str]:
        raise MemoryError("in the child")

    monkeypatch.setattr(pagedata, "encoded_items", fails)
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(states)
    b = page.browser(report)
    assert taken == [None] and len(b.items) == 7
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_a_child_that_sends_the_wrong_items_is_not_believed(
        monkeypatch: pytest.MonkeyPatch, taken: list[Any]) -> None:
    task, arms, states, report = _scored()
    monkeypatch.setattr(pagedata, "encoded_items", lambda *a: ['{"id":"x"}'])
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(states)
    b = page.browser(report)
    assert taken == [None] and len(b.items) == 7 and b.encoded == []
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_a_cancelled_child_is_stopped_and_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    task, arms, states, _ = _scored()
    forked: list[int] = []
    real = pipes.fork

    def spy() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(pipes, "fork", spy)
    monkeypatch.setattr(pagedata, "encoded_items", lambda *a: os.pause())  # never done
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(states)
    page.cancel()
    with pytest.raises(ChildProcessError):  # already reaped: no zombie left behind
        os.waitpid(forked[0], os.WNOHANG)


def test_the_listing_from_states_is_the_listing_from_the_report() -> None:
    """The child places items from the states (Ledger), the page from the report."""
    from vbw.score.metrics import Ledger, excluded_of

    task, _, states, report = _scored()
    a = listing_module.Listing(Ledger(states), excluded_of(states), task, **CAPS)
    b = listing_module.Listing({r["id"]: r for r in report.ledger}, report.excluded, task,
                               **CAPS)
    assert (a.detailed, a.listed, a.unlisted) == (b.detailed, b.listed, b.unlisted)
    assert dict(a.states) == b.states
