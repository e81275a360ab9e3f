"""Every number a report, comparison or sweep summary prints, formatted here once.

report.md, report.html, mode=compare's report and the sweep summary each once had their
own formatter, and they disagreed on the sign of a value that rounds to zero (a delta of
-0.04 points printed "+0.0" in one and "-0.0" in another). One rule now: a signed figure
that rounds to zero prints "+0.0", never "-0.0", because at the printed precision there
is no change and a minus sign would claim a direction the figure cannot show. "+0.0" is
what the published README blocks have always printed for a zero delta and for a CI bound
at zero, so they stay byte-identical.
"""

from __future__ import annotations

import math

from vbw.score.results import Rate


def pts(x: float) -> str:
    """A difference of rates in points with its sign: `+5.5`, `-0.5`; whatever rounds to
    zero (including -0.04 points) is `+0.0`."""
    v = round(100 * x, 1)
    return f"{'+' if v >= 0 else '-'}{abs(v):.1f}"


def size(x: float) -> str:
    """A magnitude in points (x >= 0), unsigned: `5.5` (an MDE, a half CI width)."""
    return f"{100 * x:.1f}"


def pct(x: float) -> str:
    """A rate as a percentage: `38.1%`."""
    return f"{100 * x:.1f}%"


def ratio(x: float) -> str:
    """A mean count, e.g. interventions per item: `1.25`."""
    return f"{x:.2f}"


def share(x: float | None) -> str:
    """A share that may be undefined (no denominator): `38.1%` or `n/a`."""
    return "n/a" if x is None else pct(x)


def prob(logprob: float) -> str:
    """A log-probability as a probability, three significant digits: `0.779`, `1.2e-05`."""
    return f"{math.exp(logprob):.3g}" if logprob == logprob else "nan"


def rate_cell(r: Rate | None) -> str:
    """A rate and its CI, `41.0% [34.5%, 47.5%]`; `n/a` for none."""
    if r is None:
        return "n/a"
    return f"{pct(r.rate)} [{pct(r.ci95[0])}, {pct(r.ci95[1])}]"
