"""Which items report.html holds, and its item data built from a second pass over the
replay (the items' views and rows are vbw.report.browser's).

The page lists at most MAX_LISTED_ITEMS items and details (texts, prompts, answers) the
first MAX_DETAILED_ITEMS of them, in task order (`Listing`); one pass over the replay's
lines builds both (`browse`), or the plain rows only while another process builds the
detailed items (`detailed_views`, in vbw.report.pagedata's child), whose JSON then takes
their place (`assemble`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from vbw.replay import ItemRecord, ReplayHeader
from vbw.report.browser import (MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, Browser, ItemView, item_view,
                                plain_row, prompts_note, reasons_row)
from vbw.score.finish import Finishes
from vbw.score.model import Excluded, Report
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

    def find(self, obj: Any) -> tuple[int, str] | None:
        """(task row, id) of a decoded replay line's item, if the page lists it."""
        item_id = obj.get("id") if isinstance(obj, dict) else None
        if item_id not in self.states and item_id not in self._out:
            return None
        row = self.row_of[item_id]
        return (row, item_id) if row in self.listed else None

    def why(self, item_id: str) -> str | None:
        """Why the item is left out of every arm; None: it is scored."""
        if item_id not in self._out:
            return None
        return self.excluded.reasons.get(item_id) or self.excluded.reason


def detailed_views(listing: Listing, task: Task, arms: list[Arm],
                   lines: Iterable[Any]) -> Iterator[tuple[int, ItemView]]:
    """(task row, view) of each detailed item, as `lines` (decoded replay lines after the
    header, in file order) holds them; stops once every one is found."""
    found = 0
    for obj in lines:
        if found == len(listing.detailed):
            break
        at = listing.find(obj)
        if at is None or at[0] not in listing.detailed:
            continue
        found += 1
        row, item_id = at
        yield row, item_view(task, task.item(row, item_id), arms,
                             ItemRecord.model_validate(obj), listing.states.get(item_id),
                             listing.why(item_id))


def kept_rows(listing: Listing, arms: list[Arm],
              finishes: Finishes) -> dict[int, dict[str, Any]] | None:
    """The plain rows (as `browse` makes them) from the finish reasons the scoring pass
    kept (vbw.score.finish), without reading the replay; None if any listed item's were
    not all kept (the page then reads them from the replay)."""
    index = finishes.index_of()
    rows = {}
    for row in sorted(listing.listed - listing.detailed):
        item_id = listing.ids[row]
        reasons = finishes.reasons(item_id, index)
        if reasons is None:
            return None
        rows[row] = reasons_row(item_id, reasons, arms, listing.states.get(item_id),
                                listing.why(item_id))
    return rows


def browse(listing: Listing, task: Task, arms: list[Arm], lines: Iterable[Any],
           details: bool = True) -> tuple[dict[int, ItemView], dict[int, dict[str, Any]]]:
    """The listed items' views (the detailed ones; none without `details`) and plain rows
    (the others), by task row, from `lines` (as detailed_views reads them). The pass
    stops once every listed item is found (the scoring pass has checked every line
    already): a replay in task order is read only as far as its last listed item."""
    views: dict[int, ItemView] = {}
    rows: dict[int, dict[str, Any]] = {}
    found = 0
    for obj in lines:
        if found == len(listing.listed):  # every listed item found: the rest of the
            break                          # replay adds nothing
        at = listing.find(obj)
        if at is None:
            continue
        found += 1
        row, item_id = at
        states, reason = listing.states.get(item_id), listing.why(item_id)
        if row not in listing.detailed:
            rows[row] = plain_row(obj, arms, states, reason)
        elif details:
            views[row] = item_view(task, task.item(row, item_id), arms,
                                   ItemRecord.model_validate(obj), states, reason)
    return views, rows


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


def build_browser(report: Report, task: Task, header: ReplayHeader,
                  lines: Iterable[Any], arms: list[Arm],
                  max_detailed: int = MAX_DETAILED_ITEMS,
                  max_listed: int = MAX_LISTED_ITEMS) -> Browser:
    """The browser's data for every item the report scored or excluded, in task order.
    `lines` are the replay's decoded lines after the header, a second streamed pass
    (vbw.replay.stream): only the cut texts of the first `max_detailed` items are kept,
    and only the first `max_listed` items are listed (a bounded page, and bounded memory
    at 100,000 items; the tables and ledger.csv still count every item)."""
    listing = Listing({row["id"]: row for row in report.ledger}, report.excluded, task,
                      max_detailed, max_listed)
    return assemble(report, task, header, arms, listing,
                    *browse(listing, task, arms, lines))
