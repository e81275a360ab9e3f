"""quadrants.svg: one 2x2 validity x correctness panel per contract arm, hand-written SVG
(no plotting dependency). The valid-but-wrong cell is the one drawn in red."""

from __future__ import annotations

from html import escape

from vbw.score.model import Report

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
                             f'fill="{fg}" text-anchor="middle">{100 * share:.1f}%</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
