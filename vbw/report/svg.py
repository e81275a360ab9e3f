"""Hand-written SVG (no plotting dependency): quadrants.svg, one 2x2 validity x correctness
panel per contract arm (the valid-but-wrong cell is the one drawn in red), and report.html's
forest plot of the paired comparisons (each delta with its CI, marked by the verdict)."""

from __future__ import annotations

import math
from html import escape

from vbw.report.markdown import plain_metric_name
from vbw.report.numbers import pct
from vbw.report.verdict import interval, p_value, pts, verdict
from vbw.score.results import Delta, Report
from vbw.score.paired import ALPHA

_W, _H, _CELL, _PAD = 230, 250, 90, 30
_LABEL_CHARS = 34  # an arm key wider than its panel is cut, the whole key in its <title>
_COLOURS = {"valid_right": "#d9f0d3", "valid_wrong": "#d73027", "invalid_right": "#fee8c8",
            "invalid_wrong": "#e0e0e0"}


def fitted(label: str, chars: int = _LABEL_CHARS) -> str:
    """An escaped label that fits `chars` characters: cut with an ellipsis, the whole
    label kept as a <title> (a tooltip), so long schema names never overlap a panel."""
    if len(label) <= chars:
        return escape(label)
    return f"{escape(label[:chars - 1])}…<title>{escape(label[:4000])}</title>"


def render_svg(r: Report) -> str:
    panels = [(k, m) for k, m in r.arms.items() if m.quadrant is not None]
    width = max(1, len(panels)) * _W + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{_H + 40}" '
             f'font-family="Helvetica, Arial, sans-serif" font-size="12">',
             f'<title>validity x correctness per arm: {escape(r.task)} (N={r.n})</title>',
             f'<text x="10" y="18" font-size="14" font-weight="bold">{fitted(r.task, 40)}: '
             f'validity × {fitted(r.correctness_label, 40)} per arm (N={r.n}); red = valid '
             f'but wrong</text>']
    for p, (key, m) in enumerate(panels):
        q = m.quadrant.model_dump()  # type: ignore[union-attr]
        x0, y0 = 10 + p * _W + _PAD + 20, 40 + _PAD + 10
        parts.append(f'<text x="{x0 + _CELL}" y="{y0 - 22}" text-anchor="middle" '
                     f'font-weight="bold">{fitted(key)}</text>')
        parts.append(f'<text x="{x0 + _CELL // 2}" y="{y0 - 6}" text-anchor="middle">right</text>')
        parts.append(f'<text x="{x0 + _CELL * 3 // 2}" y="{y0 - 6}" text-anchor="middle">wrong</text>')
        for row, validity in enumerate(("valid", "invalid")):
            parts.append(f'<text x="{x0 - 6}" y="{y0 + row * _CELL + _CELL // 2 + 4}" '
                         f'text-anchor="end">{validity}</text>')
            for col, correct in enumerate(("right", "wrong")):
                cell = f"{validity}_{correct}"
                count = q[cell]
                share = count / r.n if r.n else 0.0
                x, y = x0 + col * _CELL, y0 + row * _CELL
                fg = "#ffffff" if cell == "valid_wrong" else "#000000"
                parts.append(f'<rect x="{x}" y="{y}" width="{_CELL}" height="{_CELL}" '
                             f'fill="{_COLOURS[cell]}" stroke="#555"><title>{cell}: {count}'
                             f'</title></rect>')
                parts.append(f'<text x="{x + _CELL // 2}" y="{y + _CELL // 2}" fill="{fg}" '
                             f'text-anchor="middle" font-size="18">{count}</text>')
                parts.append(f'<text x="{x + _CELL // 2}" y="{y + _CELL // 2 + 18}" '
                             f'fill="{fg}" text-anchor="middle">{pct(share)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


_ROW, _LABEL_W, _PLOT_W, _NOTE_W, _TOP = 22, 400, 360, 250, 46


def _axis(rows: list[tuple[str, str, Delta]]) -> tuple[float, float, float]:
    """The x range in points, 0 included, rounded out to a tick step; and the step."""
    values = [0.0] + [100 * v for _, _, d in rows for v in (*d.ci95, d.delta)]
    span = max(values) - min(values)
    step = next((s for s in (1, 2, 5, 10, 20, 25, 50) if span / s <= 8), 50)
    lo = math.floor(min(values) / step) * step
    hi = math.ceil(max(values) / step) * step
    if hi - lo < step:
        lo, hi = lo - step, hi + step
    return lo, hi, step


def render_forest(r: Report) -> str:
    """The forest plot of report.html: one row per comparison and metric, its delta (a dot,
    filled when the exact McNemar test finds an effect, hollow when it does not) and its
    95% bootstrap CI (the line), against a vertical line at 0. Every string is escaped;
    no script, style sheet or external reference, so it draws under the page's CSP. ""
    when the report has no comparison."""
    rows = [(f"{c.from_} → {c.to}", plain_metric_name(m, r.correctness_label), d)
            for c in r.comparisons for m, d in c.deltas.items()]
    if not rows:
        return ""
    lo, hi, step = _axis(rows)
    x0 = _LABEL_W

    def x(v: float) -> float:
        return round(x0 + (100 * v - lo) / (hi - lo) * _PLOT_W, 1)

    height = _TOP + len(rows) * _ROW + 34
    width = _LABEL_W + _PLOT_W + _NOTE_W
    zero = x(0.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="forest" width="{width}" '
             f'height="{height}" font-family="Helvetica, Arial, sans-serif" font-size="12" '
             f'role="img">',
             f'<title>paired deltas with 95% CIs: {escape(r.task)} (N={r.n})</title>',
             f'<text x="4" y="16" font-weight="bold">Δ to − from, points, 95% bootstrap CI '
             f'(N={r.n})</text>',
             f'<text x="4" y="32" fill="#444">● effect: exact McNemar p&lt;{ALPHA:g} · ○ not '
             f'distinguishable from zero</text>']
    bottom = _TOP + len(rows) * _ROW
    tick = lo
    while tick <= hi + 1e-9:
        tx = x(tick / 100)
        parts.append(f'<line x1="{tx}" y1="{_TOP - 4}" x2="{tx}" y2="{bottom}" '
                     f'stroke="#eee"/><text x="{tx}" y="{bottom + 16}" text-anchor="middle" '
                     f'fill="#444">{tick:+g}</text>')
        tick += step
    parts.append(f'<line x1="{zero}" y1="{_TOP - 4}" x2="{zero}" y2="{bottom}" '
                 f'stroke="#555" stroke-dasharray="4 3"/>')
    for i, (pair, metric, d) in enumerate(rows):
        y = _TOP + i * _ROW + _ROW // 2
        said = verdict(d, r.n)
        note = f"{pts(d.delta)} {interval(d)} {p_value(d.mcnemar_p)}"
        colour = "#2166ac" if d.effect else "#777"
        fill = colour if d.effect else "#fff"
        parts.append(f'<g class="{"effect" if d.effect else "none"}"><title>'
                     f'{escape(pair)}, {escape(metric)}: {escape(said)}; 95% CI '
                     f'{escape(interval(d))} pts</title>')
        parts.append(f'<text x="4" y="{y + 4}">{escape(_cut(pair))} · {escape(metric)}</text>')
        parts.append(f'<line x1="{x(d.ci95[0])}" y1="{y}" x2="{x(d.ci95[1])}" y2="{y}" '
                     f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(d.delta)}" cy="{y}" r="4.5" fill="{fill}" '
                     f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{x0 + _PLOT_W + 10}" y="{y + 4}" fill="#333">'
                     f'{escape(note)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _cut(s: str, most: int = 56) -> str:
    """A label that fits the label column (the row's <title> holds it whole)."""
    return s if len(s) <= most else s[:most - 1] + "…"
