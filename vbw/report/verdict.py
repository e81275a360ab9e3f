"""The words for a paired difference's verdict, shared by every place that prints one.

report.md, report.html, mode=compare's report, the sweep summary and the gate once
disagreed: a bootstrap CI clear of 0 was printed as an effect (at N=5, "+100.0 pts, CI
[+100.0, +100.0]") while the exact McNemar test beside it said p=0.062. The verdict is now
decided once, in vbw.score (`Delta.effect`: exact McNemar p < ALPHA), and worded here once;
the CI stays beside it as the interval of the effect's size. With too few discordant items
for any split to reach p < ALPHA (no MDE), the words say that no effect of any size was
detectable at this N, rather than suggesting that the arms agree.
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


def verdict(d: Delta, n: int | None = None) -> str:
    """`+5.5 pts` for an effect; otherwise `no detectable effect at N=200`, or, when no
    split of the discordant items could reach p < ALPHA, `no effect of any size was
    detectable at N=5`. `n=None` leaves out the `at N=...` (a table that states N)."""
    if d.effect:
        return f"{pts(d.delta)} pts"
    at = "" if n is None else f" at N={n}"
    if d.mde is None:
        return f"no effect of any size was detectable{at}"
    return f"no detectable effect{at}"
