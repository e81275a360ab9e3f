"""The one number formatter: a signed figure that rounds to zero is "+0.0" everywhere."""

from __future__ import annotations

import pytest

from vbw.report.numbers import pct, pts, size
from vbw.report.verdict import interval
from vbw.score.results import Delta


@pytest.mark.parametrize(("x", "shown"), [(0.055, "+5.5"), (-0.005, "-0.5"), (0.0, "+0.0"),
                                          (-0.0, "+0.0"), (-0.0004, "+0.0"),
                                          (0.0004, "+0.0"), (-0.0006, "-0.1"), (1.0, "+100.0")])
def test_pts_never_prints_minus_zero(x: float, shown: str) -> None:
    assert pts(x) == shown


def test_pct_and_size() -> None:
    assert pct(0.381) == "38.1%"
    assert pct(0.0) == "0.0%"
    assert size(0.055) == "5.5"


def test_interval_uses_the_same_sign_rule() -> None:
    d = Delta.model_validate({"delta": -0.0004, "ci95": [-0.0004, 0.025], "excludes_0": False, "n10": 0, "n01": 2,
                              "mcnemar_p": 0.5, "effect": False, "mde": None})
    assert interval(d) == "[+0.0, +2.5]"
