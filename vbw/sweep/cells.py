"""A sweep summary row's cells, worded once for summary.md (vbw.sweep.summary) and
summary.html (vbw.sweep.html): both render the same rows, so the words live below both.

A delta's verdict is report.md's (vbw.report.verdict: exact McNemar at alpha 0.05, the CI
beside it); a rate is report.md's rate cell.
"""

from __future__ import annotations

from typing import Any

from vbw.report.markdown import rate_cell
from vbw.report.verdict import verdict
from vbw.score.paired import ALPHA
from vbw.report.numbers import pts
from vbw.report.samples import verdict as sampled_verdict
from vbw.score.results import Delta, SampledDelta


def headline_columns(rows: list[dict[str, Any]]) -> list[str]:
    """`from → to` of every headline comparison in the rows, first seen first: one summary
    column each."""
    seen: dict[str, None] = {}
    for row in rows:
        for h in row["headlines"]:
            seen.setdefault(f"{h['from']} → {h['to']}", None)
    return list(seen)


def headline_cell(row: dict[str, Any], column: str) -> str:
    """The row's delta for one headline column, worded as report.md words it:
    `+2.0 pts [+0.5, +4.0] (p=0.031)`, `+1.5 pts [-0.5, +3.5] observed; not
    distinguishable from zero at N=200 (p=0.29, MDE ±4.2 pts)`: the observed change
    beside its CI; `-` when the row's task has no such comparison."""
    h = next((h for h in row["headlines"] if f"{h['from']} → {h['to']}" == column), None)
    if h is None:
        return "-"
    if "test" in h:  # k samples: on per-item fractions (vbw.report.samples)
        d = SampledDelta.model_validate({k: h[k] for k in SampledDelta.model_fields})
        return f"{sampled_verdict(d, row['n'])}; CI [{pts(d.ci95[0])}, {pts(d.ci95[1])}]"
    d = Delta.model_validate({k: h[k] for k in Delta.model_fields})
    return verdict(d, row["n"], ci=True)


def headline_note() -> str:
    """What a headline column holds (plain text: each renderer escapes it)."""
    return ("Δ accuracy: the headline comparison (grammar off → on, same schema) named in the "
            "column, to − from, with its 95% bootstrap CI; an effect is stated when the exact "
            f"McNemar test gives p<{ALPHA:g}, as in each report; otherwise the observed change "
            "and its CI come first, then that it is not distinguishable from zero at that N, "
            "with p and the MDE. A row whose N reads N × k holds k samples per item: its "
            "change is in mean fractions of samples, decided by the sign-flip test on the "
            "per-item fractions (the report's samples section).")


def n_cell(row: dict[str, Any]) -> str:
    """N, or `N × k` for a run of k samples per item."""
    if row["n"] is None:
        return "-"
    k = row.get("samples") or 1
    return f"{row['n']} × {k}" if k > 1 else str(row["n"])


def status_cell(row: dict[str, Any]) -> str:
    return "ok" if row["exit_code"] == 0 else f"exit {row['exit_code']}: {row['reason']}"


class _R:
    """A rate dict as the markdown helpers read it."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.rate, self.ci95 = d["rate"], tuple(d["ci95"])


def arm_cell(d: dict[str, Any] | None) -> str:
    return rate_cell(None if d is None else _R(d))  # type: ignore[arg-type]
