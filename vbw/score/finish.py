"""Each listed item's finish reasons, kept by the scoring pass for report.html's plain rows.

report.html lists up to 20,000 items; all but the first 2,000 are a row of each arm's
state and finish reason (vbw.report.browser.reasons_row). The scoring pass has each line
decoded, so for the items it lists it keeps those reasons as a byte per arm
(vbw.score.shown.Lowest): the page does not read the replay again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

REASONS: tuple[str | None, ...] = (None, "stop", "length")  # what an item line may hold
_CODE = {reason: i for i, reason in enumerate(REASONS)}


def codes(arms: Mapping[str, Any] | None, keys: list[str]) -> bytes:
    """One item's reasons by arm `keys`, from its arm records as decoded (an arm it lacks
    has none, as the page shows)."""
    raw = arms or {}
    return bytes([_CODE[(raw.get(k) or {}).get("finish_reason")] for k in keys])


def reasons(kept: bytes) -> list[str | None]:
    """The reasons `codes` kept, per arm."""
    return [REASONS[c] for c in kept]
