"""report.html's item data (vbw.report.pagedata, vbw.report.listing): the listing from the
item states is the one from the report, and the plain rows from the kept finish reasons
are the replay's. (Built in a child or here, the page is the same: tests/test_processes.py.)"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.replay.stream import open_replay
from vbw.report import listing as listing_module
from vbw.report import pagedata
from vbw.report.listing import build_browser
from vbw.report.html import browser_json
from vbw.report.browser import MAX_TEXT_CHARS
from vbw.report.pagedata import ItemData
from vbw.score.metrics import build_report
from vbw.score.results import Report
from vbw.score.shown import Showing
from vbw.score.stream import Scored, score_stream
from vbw.task.arms import ARM_KINDS, Arm, task_arms
from vbw.task.runner import Task, load_task

PATH = REPLAYS / "gsm8k" / "smollm2_135m" / "outlines.jsonl"
CAPS = {"max_detailed": 7, "max_listed": 40}  # details, plain rows and unlisted items
HEADER = open_replay(PATH).header


# what the scoring pass keeps for a page of CAPS
SHOW = Showing(listed=CAPS["max_listed"], detailed=CAPS["max_detailed"], limit=MAX_TEXT_CHARS)


def _scored(path: Path = PATH) -> tuple[Task, list[Arm], Scored, Report]:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    scored = score_stream(task, open_replay(path), arms, None, io.StringIO(), showing=SHOW)
    states = scored.states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(path), provenance="", seed=1, resamples=100,
                          n_task=len(states.ids) + len(states.excluded), missing=[])
    return task, arms, scored, report


def _one_process(task: Task, arms: list[Arm], scored: Scored, report: Report) -> str:
    b = build_browser(report, task, HEADER, arms, scored.finishes, scored.shown, **CAPS)
    assert len(b.items) == 7 and len(b.rows) == 33 and b.unlisted == report.n - 40
    return "".join(browser_json(b))


def test_the_listing_from_states_is_the_listing_from_the_report() -> None:
    """The child places items from the states (Ledger), the page from the report."""
    from vbw.score.metrics import Ledger, excluded_of

    task, _, states, report = _scored()
    states = states.states
    a = listing_module.Listing(Ledger(states), excluded_of(states), task, **CAPS)
    b = listing_module.Listing({r["id"]: r for r in report.ledger}, report.excluded, task,
                               **CAPS)
    assert (a.detailed, a.listed, a.unlisted) == (b.detailed, b.listed, b.unlisted)
    assert dict(a.states) == b.states


@pytest.mark.parametrize("child", [True, False])
def test_the_page_reads_neither_the_replay_nor_the_task(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: bool) -> None:
    """Everything the page shows of the items was kept by the scoring pass
    (vbw.score.shown, vbw.score.finish): with the replay gone and the task's answers,
    prompts and items out of reach, the page is the one-process page."""
    path = tmp_path / "replay.jsonl"
    shutil.copy(PATH, path)
    task, arms, scored, report = _scored(path)
    want = _one_process(task, arms, scored, report)
    path.unlink()
    for name in ("extract", "messages", "item", "is_correct"):
        monkeypatch.setattr(Task, name, lambda *a, **k: pytest.fail("the page called the task"))
    page = ItemData(task, HEADER, arms, **CAPS)
    (page.start if child else page.keep)(scored)
    b = page.browser(report)
    assert len(b.rows) == 33 and len(b.encoded if child else b.items) == 7
    assert "".join(browser_json(b)) == want


def test_finish_reasons_are_kept_as_codes() -> None:
    from vbw.score.finish import codes, reasons

    kept = codes({"a": {"finish_reason": "length"}, "b": {"finish_reason": "stop"}},
                 ["a", "b", "c"])
    assert reasons(kept) == ["length", "stop", None]
