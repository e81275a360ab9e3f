"""report.html's detailed items built in a second process while this one builds the report.

The page's item data (vbw.report.browser: the first MAX_DETAILED_ITEMS items' views built
from what the scoring pass kept of them, vbw.score.shown, their texts cut and encoded)
depends only on that and on the item states known when the scoring pass ends. So a child
process (vbw.parallel.Child) builds and encodes them then (`ItemData.start`) while this one
builds the report and the other files, and its items are put in their place: the page is
byte for byte the one-process page. A child that fails costs only its work: the items are
then built here. Used where scoring is split (vbw.score.split.wanted) and the page is written.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

from vbw.parallel import Child
from vbw.replay import ReplayHeader
from vbw.report.browser import MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, Browser, ItemView
from vbw.report.html import item_json
from vbw.report.listing import Listing, assemble, detailed_views, kept_rows
from vbw.score.metrics import Ledger, excluded_of
from vbw.score.results import Report
from vbw.score.shown import Shown
from vbw.score.states import ItemStates
from vbw.score.stream import Scored
from vbw.task.arms import Arm
from vbw.task.runner import Task


def encoded_items(task: Task, arms: list[Arm], states: ItemStates, shown: Mapping[str, Shown],
                  caps: tuple[int, int] = (MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS)) -> list[str]:
    """The page's detailed items (in task order) as the page holds them, from the item
    states the report is built of and what the scoring pass kept of the items; `caps`:
    the page's (max_detailed, max_listed). (In the child, which leaves when it is done,
    the cyclic collector is off: it would walk the parent's whole heap, copying its
    pages, to free nothing.)"""
    gc.disable()
    listing = Listing(Ledger(states), excluded_of(states), task, *caps)
    views = detailed_views(listing, arms, shown)
    return [item_json(views[row]) for row in sorted(views)]


class ItemData:
    """report.html's item data for one task's replay: `keep` (after the scoring pass)
    takes what the pass kept for the page, `start` also forks the child that builds the
    detailed items; `browser` gives the page's data, with them if the child delivered;
    `cancel` stops a child whose page is not written."""

    def __init__(self, task: Task, header: ReplayHeader, arms: list[Arm],
                 max_detailed: int = MAX_DETAILED_ITEMS,
                 max_listed: int = MAX_LISTED_ITEMS) -> None:
        self.task, self.header, self.arms = task, header, arms
        self.caps = (max_detailed, max_listed)
        self._child: Child | None = None
        self._finishes: Mapping[str, bytes] = {}
        self._shown: Mapping[str, Shown] = {}

    def keep(self, scored: Scored) -> None:
        """What the scoring pass kept for the page (Scored.finishes and .shown)."""
        self._finishes, self._shown = scored.finishes, scored.shown

    def start(self, scored: Scored) -> None:
        """`keep`, and start the child, from the pass's item states."""
        self.cancel()
        self.keep(scored)
        states, shown = scored.states, scored.shown
        self._child = Child(lambda: encoded_items(self.task, self.arms, states, shown,
                                                  self.caps))

    def browser(self, report: Report) -> Browser:
        """The page's data for `report` (the report of the states `keep` was given): the
        plain rows are made here while the child builds the detailed items, which are
        then taken (or, if the child failed, built here)."""
        task, arms = self.task, self.arms
        listing = Listing({row["id"]: row for row in report.ledger}, report.excluded, task,
                          *self.caps)
        rows = kept_rows(listing, arms, self._finishes)
        views: dict[int, ItemView] = {}
        encoded = None
        if self._child is not None:
            encoded, self._child = self._child.result(), None
            if encoded is None or len(encoded) != len(listing.detailed):
                encoded = None
        if encoded is None:
            views = detailed_views(listing, arms, self._shown)
        return assemble(report, task, self.header, arms, listing, views, rows, encoded)

    def cancel(self) -> None:
        if self._child is not None:
            self._child.cancel()
            self._child = None
