"""The words for a paired difference's verdict, shared by every place that prints one.

The verdict is decided once, in vbw.score (`Delta.effect`: exact McNemar p < ALPHA), and
worded here once: an effect is its size (`+5.5 pts`); anything else states the observed
change first, then that it is not distinguishable from zero at this N, with the p-value
and the MDE that say how far the data are from deciding. The CI stays beside it as the
interval of the change's size. Why the words changed: docs/design.md, section
vbw.report.verdict.
"""

from __future__ import annotations

from vbw.report.numbers import pts, size
from vbw.score.results import Delta
from vbw.score.paired import ALPHA

__all__ = ["interval", "mde_text", "p_value", "pts", "verdict"]  # pts: vbw.report.numbers


def interval(d: Delta) -> str:
    """`[+0.5, +11.0]`: the bootstrap CI in points."""
    return f"[{pts(d.ci95[0])}, {pts(d.ci95[1])}]"


def p_value(p: float) -> str:
    """`p=0.039`, `p<0.001`; never rounded across ALPHA (0.0499 is not printed 0.05)."""
    if p < 0.001:
        return "p<0.001"
    s = f"{p:.2g}"
    if p < ALPHA <= float(s):
        s = f"{p:.4g}"
    return f"p={s}"


def mde_text(d: Delta) -> str:
    """The minimum detectable effect in points, or why there is none."""
    if d.mde is not None:
        return f"MDE ±{size(d.mde)} pts"
    k = d.n10 + d.n01
    if k == 0:
        return "MDE none: no discordant item"
    return f"MDE none: {k} discordant item{'' if k == 1 else 's'}, too few for p<{ALPHA:g}"


def verdict(d: Delta, n: int | None = None, *, ci: bool = False, stats: bool = True) -> str:
    """`+5.5 pts (p=0.0034)` for an effect; otherwise `+100.0 pts observed; not
    distinguishable from zero at N=3 (p=0.25, MDE none: 3 discordant items, too few for
    p<0.05)`. `n=None` leaves out the `at N=...` (a table that states N), `ci` puts the
    bootstrap CI after the size, `stats=False` leaves out the parenthesis (a table with
    p and MDE columns)."""
    change = f"{pts(d.delta)} pts" + (f" {interval(d)}" if ci else "")
    if d.effect:
        return f"{change} ({p_value(d.mcnemar_p)})" if stats else change
    at = "" if n is None else f" at N={n}"
    said = f"{change} observed; not distinguishable from zero{at}"
    return f"{said} ({p_value(d.mcnemar_p)}, {mde_text(d)})" if stats else said
