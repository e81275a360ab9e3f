"""What each arm cost (report.json's `cost`, vbw.score.cost) in report.md and report.html,
and report.html's picture of accuracy against seconds per item. Cells are plain text,
escaped by each renderer; a figure no item recorded reads "not recorded", never 0.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from vbw.report.escape import code, text
from vbw.score.results import ArmCost, MeanCI, Report

TITLE = "What each arm cost"
LEGEND = ("From the replay's own records, over the scored items that recorded each figure. "
          "Output tokens per answer and seconds per item (all of an item's samples) with a "
          "95% normal-approximation CI; ms per output token is the arm's seconds over its "
          "output tokens (prompt evaluation included); time to first token is the median; "
          "compile counts each schema's first compile (median and total seconds) and the "
          "cache hits that cost nothing. An arm that reuses another's text "
          "(reason_then_constrain) is charged that arm's tokens and seconds too.")
HEAD = ["output tokens / answer", "s / item", "ms / token", "first token (median s)",
        "compiles (first; cached)"]
NOT_RECORDED = "not recorded"


def _mean(m: MeanCI | None, digits: int) -> str:
    if m is None:
        return NOT_RECORDED
    lo, hi = m.ci95
    return f"{m.mean:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _number(v: float | None, digits: int) -> str:
    return NOT_RECORDED if v is None else f"{v:.{digits}f}"


def _compile(c: ArmCost) -> str:
    if not c.enforced:
        return "not enforced"
    if c.compile is None:  # (a server compiles on its side: 0 s recorded on every item)
        return NOT_RECORDED
    k = c.compile
    if k.first_median is None:
        return f"none; {k.cached} cached"
    return (f"{k.first} × median {k.first_median:.4f} s (total {k.first_total:.3f} s); "
            f"{k.cached} cached")


def cells(c: ArmCost) -> list[str]:
    """One arm's HEAD cells."""
    return [_mean(c.output_tokens, 1), _mean(c.seconds_per_item, 2),
            _number(c.ms_per_token, 1), _number(c.ttft_median, 3), _compile(c)]


def cost_cells(dumped: dict[str, Any] | None) -> tuple[str, str]:
    """A sweep row's output tokens per answer and seconds per item cells, from report.json's
    `cost` of the arm as dumped (None: the report has none: an older vbw's)."""
    if dumped is None:
        return NOT_RECORDED, NOT_RECORDED
    c = ArmCost.model_validate(dumped)
    return _mean(c.output_tokens, 1), _mean(c.seconds_per_item, 2)


def rows(r: Report) -> list[tuple[str, list[str]]]:
    return [(key, cells(c)) for key, c in r.cost.items()]


def markdown_lines(r: Report) -> list[str]:
    """report.md's section (with a leading blank line), or none for a report without arms."""
    if not r.cost:
        return []
    out = ["", f"## {TITLE}", "", LEGEND, "",
           "| arm | " + " | ".join(HEAD) + " |", "|---" * (len(HEAD) + 1) + "|"]
    out += ["| " + " | ".join([code(k, in_table=True), *(text(c) for c in cs)]) + " |"
            for k, cs in rows(r)]
    return out


def html_view(r: Report) -> dict[str, Any] | None:
    """report.html's section (plain text, escaped by Jinja), or None."""
    if not r.cost:
        return None
    return {"title": TITLE, "legend": LEGEND, "head": HEAD, "arms": rows(r)}


def cost_side_by_side(costs: dict[str, dict[str, ArmCost]]) -> list[str]:
    """report.md lines of mode=compare (and the sweep summary): per arm, each replay's
    cost over the paired items (with a leading blank line); none without replays."""
    if not costs:
        return []
    out = ["", f"## {TITLE} (over the paired items)", "",
           "| arm | replay | " + " | ".join(HEAD) + " |", "|---" * (len(HEAD) + 2) + "|"]
    arms = list(next(iter(costs.values())))
    for arm in arms:
        for label, per_arm in costs.items():
            if arm in per_arm:
                out.append("| " + " | ".join([code(arm, in_table=True),
                                              code(label, in_table=True),
                                              *(text(c) for c in cells(per_arm[arm]))]) + " |")
    return out


W, H, PAD = 520, 260, 48


def render_cost_svg(r: Report) -> str:
    """Accuracy (y) against seconds per item (x, log scale) per arm that recorded its
    seconds: a dot and the arm's key. Every string escaped; no script or external
    reference. "" when no arm recorded seconds."""
    points = [(key, c.seconds_per_item.mean, r.arms[key].answer_accuracy.rate)
              for key, c in r.cost.items()
              if c.seconds_per_item is not None and c.seconds_per_item.mean > 0
              and key in r.arms]
    if not points:
        return ""
    xs = [math.log10(p[1]) for p in points]
    lo, hi = math.floor(min(xs)), math.ceil(max(xs))
    hi = hi if hi > lo else lo + 1
    span_x, span_y = W - 2 * PAD, H - 2 * PAD

    def at(sec: float, acc: float) -> tuple[float, float]:
        return (PAD + (math.log10(sec) - lo) / (hi - lo) * span_x,
                H - PAD - acc * span_y)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
           f'height="{H}" role="img" aria-label="{escape(r.correctness_label)} against '
           'seconds per item, per arm">',
           f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#888"/>',
           f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="#888"/>']
    for e in range(lo, hi + 1):
        x = PAD + (e - lo) / (hi - lo) * span_x
        out.append(f'<text x="{x:.1f}" y="{H - PAD + 16}" font-size="11" '
                   f'text-anchor="middle">{10.0 ** e:g} s</text>')
    for frac in (0.0, 0.5, 1.0):
        y = H - PAD - frac * span_y
        out.append(f'<text x="{PAD - 6}" y="{y + 4:.1f}" font-size="11" '
                   f'text-anchor="end">{frac * 100:.0f}%</text>')
    out.append(f'<text x="{W / 2}" y="{H - 8}" font-size="12" text-anchor="middle">seconds '
               'per item (log scale)</text>')
    out.append(f'<text x="12" y="{H / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 12 {H / 2})">{escape(r.correctness_label)}</text>')
    for key, sec, acc in points:
        x, y = at(sec, acc)
        label = escape(key if len(key) <= 40 else key[:39] + "…")
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#2a6fdb"><title>{label}: '
                   f'{acc * 100:.1f}% at {sec:.2f} s/item</title></circle>')
        out.append(f'<text x="{x + 6:.1f}" y="{y - 6:.1f}" font-size="11">{label}</text>')
    out.append("</svg>")
    return "\n".join(out)
