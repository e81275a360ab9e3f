"""report.json's models (vbw.score.results): a Delta's verdict follows from its p-value, at
the level's boundary too (an effect is p < ALPHA, strictly), so every report and the
compare.fail_if_worse gate read one verdict."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from vbw.score.results import Delta
from vbw.score.paired import ALPHA


def _delta(p: float, **effect: bool) -> Delta:
    return Delta.model_validate({"delta": -0.25, "ci95": (-0.4, -0.1), "excludes_0": True,
                                 "n10": 9, "n01": 1, "mcnemar_p": p, "mde": 0.2, **effect})


def test_p_exactly_at_alpha_is_no_effect_and_just_below_is_one() -> None:
    assert _delta(ALPHA).effect is False
    assert _delta(math.nextafter(ALPHA, 0.0)).effect is True
    assert _delta(math.nextafter(ALPHA, 1.0)).effect is False


def test_a_stated_effect_that_disagrees_with_p_is_refused() -> None:
    with pytest.raises(ValidationError, match=f"effect=True but mcnemar_p={ALPHA}"):
        _delta(ALPHA, effect=True)
    assert _delta(ALPHA, effect=False).effect is False
