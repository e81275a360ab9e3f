"""summary.html: the sweep summary as one self-contained page (no script, no network),
each job linking its own report.html by a relative path, so the sweep folder can be
opened from file:// or copied anywhere. Every string is escaped: task names, overrides
and reasons come from the user's command line and files."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vbw.report.interventions import summary_text
from vbw.score.results import ArmInterventions
from vbw.report.cost import cost_cells
from vbw.sweep.cells import (arm_cell, headline_cell, headline_columns, headline_note,
                             n_cell, status_cell)

_STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;
padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f3f3f3}
.bad{color:#a40000;font-weight:600}.ok{color:#1a6b1a}code{font-size:90%}
ul{margin:0;padding-left:1.1em}"""


def _e(s: Any) -> str:
    return escape("" if s is None else str(s), quote=True)


def _link(path: str | None, label: str) -> str:
    if not path:
        return "-"
    href = "/".join(quote(part) for part in Path(path).parts)
    return f'<a href="{_e(href)}">{_e(label)}</a>'


def _arms(row: dict[str, Any]) -> str:
    if not row["arms"]:
        return "-"
    items = [f"<li><code>{_e(k)}</code>: validity {_e(arm_cell(m['schema_validity']))}; "
             f"{_e(row['correctness_label'])} {_e(arm_cell(m['answer_accuracy']))}; "
             f"wrong-but-valid {_e(arm_cell(m['wrong_but_valid']))}{_interventions(row, k)}"
             f"{_cost(row, k)}</li>" for k, m in row["arms"].items()]
    return "<ul>" + "".join(items) + "</ul>"


def _cost(row: dict[str, Any], arm: str) -> str:
    """`; output tokens / answer ...; s / item ...` from the job's report (vbw.score.cost)."""
    tokens, seconds = cost_cells((row.get("cost") or {}).get(arm))
    return f"; output tokens / answer {_e(tokens)}; s / item {_e(seconds)}"


def _interventions(row: dict[str, Any], arm: str) -> str:
    """`; interventions: ...` for an enforced arm, side by side across jobs."""
    summary = (row.get("interventions") or {}).get(arm)
    if summary is None:
        return ""
    return "; " + _e(summary_text(ArmInterventions.model_validate(summary)))


def _row(row: dict[str, Any], columns: list[str]) -> str:
    cls = "ok" if row["exit_code"] == 0 else "bad"
    cells = [_e(row["job"]), _e(row["task"] or "?"), _e(row["model"] or "?"),
             _e(row["engine"] or "?"), "<code>" + _e(" ".join(row["other_overrides"])) + "</code>",
             _e(n_cell(row)), _arms(row),
             *(_e(headline_cell(row, c)) for c in columns),
             f'<span class="{cls}">{_e(status_cell(row))}</span>',
             _link(row["report_html"], "report.html") + " · " + _link(row["report"], "report.md")]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def render_html(sweep_dir: Path, rows: list[dict[str, Any]], exit_code: int) -> str:
    columns = headline_columns(rows)
    head = ("<tr><th>job</th><th>task</th><th>model</th><th>engine</th><th>other overrides"
            "</th><th>N</th><th>arms: validity; accuracy; wrong-but-valid (95% CI)</th>"
            + "".join(f"<th>Δ accuracy <code>{_e(c)}</code></th>" for c in columns)
            + "<th>status</th><th>report</th></tr>")
    body = "\n".join(_row(r, columns) for r in rows)
    note = ("" if not columns else
            f"<p>{_e(headline_note())}</p>\n")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>vbw sweep summary</title><style>{_STYLE}</style></head><body>\n"
            f"<h1>vbw sweep: {len(rows)} row(s), exit {exit_code}</h1>\n"
            f"<p>Sweep folder: <code>{_e(sweep_dir)}</code></p>\n"
            f"<table>{head}\n{body}\n</table>\n{note}</body></html>\n")
