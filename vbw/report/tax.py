"""The grammar's tax in report.md and report.html: per enforced arm that recorded it, the
nats per item over all its items and by outcome. Cells are plain text, escaped by each
renderer; a report without a recorded tax has no section (and reads as it always has).
"""

from __future__ import annotations

from typing import Any

from vbw.report.escape import code, text
from vbw.score.results import Report, TaxFigures

TITLE = "The grammar's tax"
LEGEND = ("Nats per item the grammar took from the model: over the arm's tokens, the sum "
          "of -log(probability mass the grammar left allowed) under the model's own "
          "distribution (temperature 1), which is log p(text) under the renormalised "
          "constraint minus log p(text) unconstrained; 0 means the grammar removed nothing. "
          "Each cell: mean (median) over the items of that column that recorded it, and "
          "how many items.")
HEAD = ["all items", "valid, right", "wrong but valid", "invalid", "paid none"]
OUTCOMES = ("right", "wrong_but_valid", "invalid")


def _cell(f: TaxFigures) -> str:
    if not f.items or f.mean is None or f.median is None:
        return "no items"
    return f"{f.mean:.2f} ({f.median:.2f}), {f.items}"


def rows(r: Report) -> list[tuple[str, list[str]]]:
    """Per arm that recorded the tax: its key and the HEAD cells."""
    return [(key, [_cell(t.all), *(_cell(t.by_outcome[o]) for o in OUTCOMES),
                   f"{t.all.zero} of {t.all.items}"])
            for key, t in r.tax.items()]


def markdown_lines(r: Report) -> list[str]:
    """report.md's section (with a leading blank line), or none."""
    if not r.tax:
        return []
    out = ["", f"## {TITLE}", "", LEGEND, "",
           "| arm | " + " | ".join(HEAD) + " |", "|---" * (len(HEAD) + 1) + "|"]
    out += ["| " + " | ".join([code(k, in_table=True), *(text(c) for c in cells)]) + " |"
            for k, cells in rows(r)]
    unrecorded = [f"{code(k)} ({t.not_recorded})" for k, t in r.tax.items() if t.not_recorded]
    if unrecorded:
        out += ["", "Items without a recorded tax: " + ", ".join(unrecorded) + "."]
    return out


def html_view(r: Report) -> dict[str, Any] | None:
    """report.html's section (plain text, escaped by Jinja), or None."""
    if not r.tax:
        return None
    return {"title": TITLE, "legend": LEGEND, "head": HEAD, "arms": rows(r)}
