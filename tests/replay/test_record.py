"""vbw.replay.record: the fast path accepts exactly the plain shape of an item line and
gives what the pydantic model gives; anything else is left to the model."""

from __future__ import annotations

import pytest

from tests.replay.test_stream import EVENT, _line
from vbw.replay.format import ItemRecord
from vbw.replay.record import ScoredRecord, as_scored
from vbw.replay.record import light as _light
from vbw.score.finish import codes as finish_codes


def _same(a: ScoredRecord, b: ScoredRecord) -> bool:
    """Equal records: every field, and of the arm records the finish reasons (all that is
    read of them; the fast path keeps them as decoded, the model's path as its values)."""
    keys = ["constrained[answer]", "unconstrained", "absent"]
    if (a.samples is None) != (b.samples is None) or \
            len(a.samples or []) != len(b.samples or []):
        return False
    return (a._replace(arms=None, samples=None) == b._replace(arms=None, samples=None)
            and finish_codes(a.arms, keys) == finish_codes(b.arms, keys)
            and all(map(_same, a.samples or [], b.samples or [])))


@pytest.mark.parametrize("events", [[EVENT], [], [{**EVENT, "allowed_mass": 0.5,
                                                   "wanted_id": 7, "forced_id": None}]])
def test_fast_path_equals_the_model(events: list) -> None:
    obj = _line(interventions=events)
    fast = _light(obj)
    assert fast is not None  # plain shape: no pydantic
    assert _same(fast, as_scored(ItemRecord.model_validate(obj)))
    assert fast.interventions == {"constrained[answer]": [(5, 2)] * len(events)}


def test_absent_field_is_not_recorded() -> None:
    fast = _light(_line())
    assert fast is not None and fast.interventions is None
    assert _light(_line(interventions=None)).interventions is None


@pytest.mark.parametrize("event", [{**EVENT, "lp_wanted": 0}, {**EVENT, "pos": True},
                                   {**EVENT, "extra": 1}, {**EVENT, "char": -1},
                                   {k: v for k, v in EVENT.items() if k != "forced"}])
def test_other_shapes_go_to_the_model(event: dict) -> None:
    assert _light(_line(interventions=[event])) is None


@pytest.mark.parametrize("arm", [{"seconds": 1}, {"seconds": 1.5, "compile_seconds": 0},
                                 {"n_tokens": None, "ttft_seconds": 2},
                                 {"finish_reason": "length", "reuses": "unconstrained"},
                                 {"redacted": True, "unsupported_schema": None, "text": None},
                                 {"tax": 0.0}, {"tax": 2.5, "interventions": []}])
def test_plain_arm_fields_take_the_fast_path(arm: dict) -> None:
    fast = _light(_line(**arm))
    assert fast is not None and _same(fast, as_scored(ItemRecord.model_validate(_line(**arm))))


@pytest.mark.parametrize("arm", [{"seconds": None}, {"compile_seconds": "1"},
                                 {"n_tokens": True}, {"n_tokens": 3.0},
                                 {"ttft_seconds": "1"}, {"finish_reason": "eos"},
                                 {"finish_reason": 1}, {"reuses": 1}, {"redacted": 1},
                                 {"text": 5}, {"interventions": {}}, {"extra": 1}])
def test_other_arm_fields_go_to_the_model(arm: dict) -> None:
    assert _light(_line(**arm)) is None
