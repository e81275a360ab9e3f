"""report.html's item data (vbw.report.pagedata, vbw.report.listing): the listing from the
item states is the one from the report, and the plain rows from the kept finish reasons
are the replay's. (Built in a child or here, the page is the same: tests/test_processes.py.)"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.replay.stream import open_replay
from vbw.report import listing as listing_module
from vbw.report import pagedata
from vbw.report.listing import build_browser
from vbw.report.html import browser_json
from vbw.report.pagedata import ItemData
from vbw.score.metrics import build_report
from vbw.score.model import Report
from vbw.score.stream import Scored, score_stream
from vbw.task.arms import ARM_KINDS, Arm, task_arms
from vbw.task.runner import Task, load_task

PATH = REPLAYS / "gsm8k" / "smollm2_135m" / "outlines.jsonl"
CAPS = {"max_detailed": 7, "max_listed": 40}  # details, plain rows and unlisted items


def _scored(keep_finish: int = 0, path: Path = PATH) -> tuple[Task, list[Arm], Scored, Report]:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    scored = score_stream(task, open_replay(path), arms, None, io.StringIO(),
                          keep_finish=keep_finish)
    states = scored.states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(path), provenance="", seed=1, resamples=100,
                          n_task=len(states.ids) + len(states.excluded), missing=[])
    return task, arms, scored, report


def _one_process(task: Task, arms: list[Arm], report: Report, path: Path = PATH) -> str:
    stream = open_replay(path)
    b = build_browser(report, task, stream.header, (o for _, o in stream.lines()), arms, **CAPS)
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


@pytest.mark.parametrize("keep", [40, 200])
def test_the_plain_rows_from_the_kept_finish_reasons_are_the_replays(
        keep: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scoring pass kept each listed item's finish reasons (vbw.score.finish): the
    page's rows are made from them, the replay is not read for them, and the page is
    the one-process page."""
    task, arms, scored, report = _scored(keep_finish=keep)
    assert scored.finishes is not None and len(scored.finishes.ids) == keep
    real, reads = pagedata.browse, []
    monkeypatch.setattr(pagedata, "browse", lambda *a, **k: reads.append(1) or real(*a, **k))
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(scored)
    b = page.browser(report)
    assert reads == [] and len(b.rows) == 33
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_rows_not_kept_are_read_from_the_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept for fewer items than the page lists: the rows come from the replay, the same
    page."""
    task, arms, scored, report = _scored(keep_finish=10)
    real, reads = pagedata.browse, []
    monkeypatch.setattr(pagedata, "browse", lambda *a, **k: reads.append(1) or real(*a, **k))
    page = ItemData(task, PATH, arms, **CAPS)
    page.start(scored)
    b = page.browser(report)
    assert reads == [1]
    assert "".join(browser_json(b)) == _one_process(task, arms, report)


def test_a_reason_without_a_code_is_not_kept() -> None:
    """(The item-line model allows stop and length only; a reason outside vbw's codes
    would send the page back to the replay rather than be lost.)"""
    import numpy as np

    from vbw.score.finish import OTHER, Finishes, codes

    row = codes({"a": {"finish_reason": "length"}, "b": {"finish_reason": "x"}}, ["a", "b", "c"])
    assert row == [3, OTHER, 1]
    kept = Finishes(["i", "j"], np.array([row, [2, 1, 3]], dtype=np.uint8))
    index = kept.index_of()
    assert kept.reasons("i", index) is None and kept.reasons("k", index) is None
    assert kept.reasons("j", index) == ["stop", None, "length"]
