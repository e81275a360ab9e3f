"""Numbers within a schema's bounds and multiples of its multipleOf: what is built is
valid, what is refused has no instance, bounds meeting at one value hold it."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from vbw.task.schema.numbers import EXACT, integer, number
from vbw.task.schema.walk import Unbuildable, Unsatisfiable


@pytest.mark.parametrize(("schema", "value"), [
    ({"minimum": 5, "maximum": 5}, 5),                      # one integer: held, not refused
    ({"exclusiveMinimum": 4, "exclusiveMaximum": 6}, 5),
    ({"minimum": 4.5, "maximum": 5.5}, 5),
    ({"minimum": 5, "maximum": 5, "multipleOf": 5}, 5),
    ({"minimum": 1, "maximum": 1, "multipleOf": 0.5}, 1),
    ({"minimum": 3, "maximum": 3, "multipleOf": 1.5}, 3),
])
def test_integer_bounds_meeting_at_one_value(schema: dict[str, Any], value: int) -> None:
    assert integer(schema) == value
    assert Draft202012Validator({"type": "integer", **schema}).is_valid(value)


@pytest.mark.parametrize("schema", [
    {"minimum": 5, "exclusiveMaximum": 5}, {"exclusiveMinimum": 5, "maximum": 5},
    {"minimum": 5.1, "maximum": 5.9}, {"minimum": 1, "maximum": 2, "multipleOf": 1.5},
])
def test_integer_bounds_that_hold_none(schema: dict[str, Any]) -> None:
    with pytest.raises(Unsatisfiable):
        integer(schema)


@pytest.mark.parametrize(("schema", "value"), [
    ({"minimum": 0.5, "maximum": 0.5, "multipleOf": 0.5}, 0.5),
    ({"minimum": -3.2, "maximum": -1.1, "multipleOf": 0.5}, -1.5),
    ({"exclusiveMinimum": 0.5, "maximum": 1, "multipleOf": 0.25}, 1),  # 0.5 is excluded
    ({"minimum": 0.5, "maximum": 0.5}, 0.5),
])
def test_number_multiples(schema: dict[str, Any], value: float) -> None:
    assert number(schema) == value
    assert Draft202012Validator({"type": "number", **schema}).is_valid(value)


def test_a_fractional_step_is_refused_only_when_no_multiple_is_near() -> None:
    with pytest.raises(Unsatisfiable):
        number({"minimum": 0.35, "maximum": 0.36, "multipleOf": 0.1})
    # 0.3 is 3 * 0.1, but jsonschema's float division says 2.9999999999999996: nothing
    # is built, and nothing is concluded
    with pytest.raises(Unbuildable) as e:
        number({"minimum": 0.3, "maximum": 0.3, "multipleOf": 0.1})
    assert not isinstance(e.value, Unsatisfiable)


def test_integers_beyond_exact_floats_are_not_decided_with_a_fractional_step() -> None:
    """Past 2**53 jsonschema's float division may call a non-multiple a multiple."""
    assert integer({"minimum": EXACT, "maximum": EXACT, "multipleOf": 0.5}) == EXACT
    with pytest.raises(Unbuildable) as e:
        integer({"minimum": EXACT + 1, "maximum": EXACT + 1, "multipleOf": 1.5})
    assert not isinstance(e.value, Unsatisfiable)
