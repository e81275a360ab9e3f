"""report.html's detailed items, built by a child process (vbw.parallel.Child) from the
item states as the scoring pass ends, while this one builds the report; the page is the
one-process page byte for byte, and a child that fails costs only its work.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

from vbw.parallel import Child
from vbw.replay import ReplayHeader
from vbw.report.browser import MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, Browser
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
                  caps: tuple[int, int]) -> list[str]:
    """The page's detailed items (in task order) as the page holds them; `caps`: its
    (max_detailed, max_listed). (The child's collector is off: it would walk, and copy,
    the parent's whole heap to free nothing.)"""
    gc.disable()
    listing = Listing(Ledger(states), excluded_of(states), task, *caps)
    views = detailed_views(listing, arms, shown)
    return [item_json(views[row]) for row in sorted(views)]


class ItemData:
    """report.html's item data for one task's replay: `keep` what the scoring pass kept
    for the page, or `start` the child too; `browser`, the page's data; `cancel`."""

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
        """The page's data for `report` (of the states `keep` was given): the plain rows
        built here, the detailed items by the child (or here, if it failed)."""
        listing = Listing({row["id"]: row for row in report.ledger}, report.excluded,
                          self.task, *self.caps)
        child, self._child = self._child, None
        encoded = child.result() if child is not None else None
        if encoded is not None and len(encoded) != len(listing.detailed):
            encoded = None
        views = {} if encoded is not None else detailed_views(listing, self.arms, self._shown)
        return assemble(report, self.task, self.header, self.arms, listing, views,
                        kept_rows(listing, self.arms, self._finishes), encoded)

    def cancel(self) -> None:
        if self._child is not None:
            self._child.cancel()
            self._child = None
