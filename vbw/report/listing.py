"""Which items report.html holds, and its item data built from a second pass over the
replay (the items' views and rows are vbw.report.browser's).

The page lists at most MAX_LISTED_ITEMS items and details (texts, prompts, answers) the
first MAX_DETAILED_ITEMS of them, in task order (`Listing`); one pass over the replay's
lines builds both (`browse`), or the plain rows only while another process builds the
detailed items (`detailed_views`, in vbw.report.pagedata's child), whose JSON then takes
their place (`assemble`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vbw.replay import ReplayHeader
from vbw.report.browser import (MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, Browser, ItemView,
                                item_view, prompts_note, reasons_row)
from vbw.score.finish import reasons
from vbw.score.shown import Shown
from vbw.score.results import Excluded, Report
from vbw.task.arms import Arm
from vbw.task.runner import Task


class Listing:
    """Which items the page holds, in task order: of those the report scored or excluded,
    the first `max_detailed` with their texts and the first `max_listed` at all. Built
    from the report's ledger (rows by id) and exclusions, or from the item states they
    are made of (vbw.score.metrics: Ledger, excluded_of) in another process
    (vbw.report.pagedata), so both processes agree on every item's place."""

    def __init__(self, ledger: Mapping[str, dict[str, str]], excluded: Excluded, task: Task,
                 max_detailed: int = MAX_DETAILED_ITEMS,
                 max_listed: int = MAX_LISTED_ITEMS) -> None:
        self.states, self.excluded, self._out = ledger, excluded, set(excluded.ids)
        self.max_detailed = max_detailed
        self.ids = task.ids(None)  # by task row
        self.row_of = {item_id: i for i, item_id in enumerate(self.ids)}
        shown = sorted(self.row_of[i] for i in (*ledger, *self._out))
        self.detailed = set(shown[:max_detailed])
        self.listed = set(shown[:max_listed])
        self.unlisted = max(0, len(shown) - max_listed)

    def why(self, item_id: str) -> str | None:
        """Why the item is left out of every arm; None: it is scored."""
        if item_id not in self._out:
            return None
        return self.excluded.reasons.get(item_id) or self.excluded.reason


def detailed_views(listing: Listing, arms: list[Arm],
                   shown: Mapping[str, Shown]) -> dict[int, ItemView]:
    """Each detailed item's view by task row, from what the scoring pass kept of it
    (vbw.score.stream.Scored.shown)."""
    views = {}
    for row in sorted(listing.detailed):
        item_id = listing.ids[row]
        views[row] = item_view(item_id, arms, shown[item_id], listing.states.get(item_id),
                               listing.why(item_id))
    return views


def kept_rows(listing: Listing, arms: list[Arm],
              finishes: Mapping[str, bytes]) -> dict[int, dict[str, Any]]:
    """The plain rows (the listed items that are not detailed) by task row, from the
    finish reasons the scoring pass kept (vbw.score.finish)."""
    rows = {}
    for row in sorted(listing.listed - listing.detailed):
        item_id = listing.ids[row]
        rows[row] = reasons_row(item_id, reasons(finishes[item_id]), arms,
                                listing.states.get(item_id), listing.why(item_id))
    return rows


def assemble(report: Report, task: Task, header: ReplayHeader, arms: list[Arm],
             listing: Listing, views: dict[int, ItemView], rows: dict[int, dict[str, Any]],
             encoded: list[str] | None = None) -> Browser:
    """The Browser from `browse`'s parts; `encoded`: the detailed items as the page holds
    them, built by another process (vbw.report.pagedata), in place of `views`."""
    browser = Browser(arms=[a.key for a in arms],
                      contract=[a.key for a in arms if a.has_contract],
                      comparisons=[(c.from_, c.to) for c in report.comparisons],
                      prompts_note=prompts_note(header, task),
                      max_detailed=listing.max_detailed,
                      unlisted=listing.unlisted, items=[views[r] for r in sorted(views)])
    browser.rows = [rows[r] for r in sorted(rows)]  # assigned, not validated: no copy
    browser.encoded = encoded or []
    return browser


def build_browser(report: Report, task: Task, header: ReplayHeader, arms: list[Arm],
                  finishes: Mapping[str, bytes], shown: Mapping[str, Shown],
                  max_detailed: int = MAX_DETAILED_ITEMS,
                  max_listed: int = MAX_LISTED_ITEMS) -> Browser:
    """The browser's data for every item the report scored or excluded, in task order,
    from what the scoring pass kept (`finishes`, `shown`: vbw.score.stream.Scored's, kept
    with at least these caps): only the first `max_detailed` items carry texts and only
    the first `max_listed` are listed (a bounded page at 100,000 items; the tables and
    ledger.csv still count every item)."""
    listing = Listing({row["id"]: row for row in report.ledger}, report.excluded, task,
                      max_detailed, max_listed)
    return assemble(report, task, header, arms, listing, detailed_views(listing, arms, shown),
                    kept_rows(listing, arms, finishes))
