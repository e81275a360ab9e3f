"""Each held item's finish reasons, kept by the scoring pass for report.html's plain rows.

report.html lists up to 20,000 items; all but the first 2,000 are a row of each arm's
state and finish reason (vbw.report.browser.plain_row). Those rows used to come from a
second pass that decoded every listed line again, on one core after the scoring pass,
for one short string per arm. The scoring pass has each line decoded already, so for the
first `keep` positions it keeps those strings as a byte per (item, arm): vbw's own
reasons by code, anything else as OTHER, which sends the page back to reading the
replay. Nothing else reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

NOT_KEPT, OTHER = 0, 255  # a position the pass did not keep; a reason with no code
REASONS: tuple[str | None, ...] = (None, "stop", "length")  # codes 1, 2, 3
_CODE = {reason: i + 1 for i, reason in enumerate(REASONS)}


class Finishes(NamedTuple):
    """The finish-reason codes of the first selected positions: `ids[i]`'s row is
    `codes[i]` (one column per arm, in the pass's arm order)."""

    ids: list[str]
    codes: np.ndarray  # uint8 (len(ids), arms)

    def reasons(self, item_id: str, index: Mapping[str, int]) -> list[str | None] | None:
        """The item's finish reason per arm, or None where they were not all kept
        (`index`: `ids` by id, from `index_of`)."""
        i = index.get(item_id)
        if i is None:
            return None
        row = self.codes[i].tolist()
        if NOT_KEPT in row or OTHER in row:
            return None
        return [REASONS[c - 1] for c in row]

    def index_of(self) -> dict[str, int]:
        return {item_id: i for i, item_id in enumerate(self.ids)}


def codes(arms: Mapping[str, Any] | None, keys: list[str]) -> list[int]:
    """One item's codes, from its arm records as decoded: an arm it lacks has none (the
    page shows no reason for it, as plain_row does)."""
    raw = arms or {}
    return [_CODE.get((raw.get(k) or {}).get("finish_reason"), OTHER) for k in keys]
