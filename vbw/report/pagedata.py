"""report.html's detailed items built in a second process while this one builds the report.

The page's item data (vbw.report.browser: the first MAX_DETAILED_ITEMS items read again,
their answers extracted, prompts rendered, texts cut and encoded) depends only on the task,
the replay and the item states known when the scoring pass ends. So a child process
(vbw.parallel.Child) builds and encodes them then (`ItemData.start`) while this one builds
the report and the other files, and its items are put in their place: the page is byte for
byte the one-process page. A child that fails costs only its work: the items are then
built here. Used where scoring is split (vbw.score.split.wanted) and the page is written.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vbw.parallel import Child
from vbw.replay.stream import open_replay
from vbw.report.browser import MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, Browser, ItemView
from vbw.report.html import item_json
from vbw.report.listing import Listing, assemble, browse, detailed_views, kept_rows
from vbw.score.finish import Finishes
from vbw.score.metrics import Ledger, excluded_of
from vbw.score.model import Report
from vbw.score.states import ItemStates
from vbw.score.stream import Scored
from vbw.task.arms import Arm
from vbw.task.runner import Task


def _lines(replay: Path) -> Iterator[Any]:
    """The replay's decoded lines after the header, values exactly as json reads them."""
    return (obj for _, obj in open_replay(replay).lines(exact_values=True))


def encoded_items(task: Task, replay: Path, arms: list[Arm], states: ItemStates,
                  caps: tuple[int, int] = (MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS)) -> list[str]:
    """The page's detailed items (in task order) as the page holds them, from the item
    states the report is built of; `caps`: the page's (max_detailed, max_listed). (In the
    child, which leaves when it is done, the cyclic collector is off: it would walk the
    parent's whole heap, copying its pages, to free nothing.)"""
    gc.disable()
    listing = Listing(Ledger(states), excluded_of(states), task, *caps)
    views = dict(detailed_views(listing, task, arms, _lines(replay)))
    return [item_json(views[row]) for row in sorted(views)]


class ItemData:
    """report.html's item data for one task's replay: `start` (after the scoring pass)
    starts the child that builds the detailed items; `browser` gives the page's data,
    with them if the child delivered; `cancel` stops a child whose page is not written."""

    def __init__(self, task: Task, replay: Path, arms: list[Arm],
                 max_detailed: int = MAX_DETAILED_ITEMS,
                 max_listed: int = MAX_LISTED_ITEMS) -> None:
        self.task, self.replay, self.arms = task, replay, arms
        self.caps = (max_detailed, max_listed)
        self._child: Child | None = None
        self._finishes: Finishes | None = None

    def start(self, scored: Scored) -> None:
        """Start the child, from the pass's item states; keep the finish reasons the pass
        kept (Scored.finishes, if any), which make the plain rows without the replay."""
        self.cancel()
        states, self._finishes = scored.states, scored.finishes
        self._child = Child(lambda: encoded_items(self.task, self.replay, self.arms, states,
                                                   self.caps))

    def browser(self, report: Report) -> Browser:
        """The page's data for `report` (the report of the states `start` was given): the
        plain rows are made here (from the kept finish reasons, or a pass over the
        replay) while the child builds the detailed items, which are then taken (or, if
        the child failed, built here)."""
        task, arms = self.task, self.arms
        listing = Listing({row["id"]: row for row in report.ledger}, report.excluded, task,
                          *self.caps)
        rows = None if self._finishes is None else kept_rows(listing, arms, self._finishes)
        views: dict[int, ItemView] = {}
        if rows is None:
            views, rows = browse(listing, task, arms, _lines(self.replay),
                                 details=self._child is None)
        elif self._child is None:
            views = dict(detailed_views(listing, task, arms, _lines(self.replay)))
        encoded = None
        if self._child is not None:
            encoded, self._child = self._child.result(), None
            if encoded is None or len(encoded) != len(listing.detailed):
                encoded = None
                views = dict(detailed_views(listing, task, arms, _lines(self.replay)))
        return assemble(report, task, open_replay(self.replay).header, arms, listing, views,
                        rows, encoded)

    def cancel(self) -> None:
        if self._child is not None:
            self._child.cancel()
            self._child = None
