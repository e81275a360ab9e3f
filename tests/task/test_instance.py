"""The minimal-instance generator: what it builds validates, what it calls unsatisfiable has
no instance (with the reason), and what it does not cover is said, not guessed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from vbw.task.instance import (Unbuildable, Unsatisfiable, at_path, minimal, unsatisfiable,
                               with_value)

TICKET = {"type": "object",
          "properties": {"category": {"enum": ["billing", "tech", "other"]},
                         "amount": {"type": "number"}},
          "required": ["category", "amount"], "additionalProperties": False}


def _valid(schema: Any, value: Any) -> bool:
    return Draft202012Validator(schema).is_valid(value)


BUILDABLE = [
    TICKET,
    {"type": "object", "properties": {"reasoning": {"type": "string"},
                                      "answer": {"type": "integer"}},
     "required": ["reasoning", "answer"], "additionalProperties": False},
    {"type": "integer", "minimum": 3, "multipleOf": 5},
    {"type": "integer", "exclusiveMinimum": 7, "maximum": 9},
    {"type": "integer", "maximum": -4},
    {"type": "number", "exclusiveMinimum": 0},
    {"type": "number", "minimum": 0.5, "exclusiveMaximum": 0.75},
    {"type": "number", "exclusiveMinimum": 2, "exclusiveMaximum": 3},
    {"type": "string", "minLength": 3, "maxLength": 3},
    {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"},
    {"type": "string", "pattern": "abc"},
    {"type": ["null", "string"]},
    {"type": "boolean"},
    {"const": {"a": [1]}},
    {"enum": [3, "x"], "type": "string"},
    {"type": "array", "minItems": 2, "items": {"type": "string", "minLength": 1}},
    {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}],
     "minItems": 2},
    {"type": "array", "contains": {"const": 7}},
    {"type": "object", "minProperties": 1, "properties": {"x": {"type": "null"}}},
    {"type": "object", "patternProperties": {"^n_": {"type": "integer", "minimum": 2}},
     "required": ["n_a"], "additionalProperties": False},
    {"$defs": {"pos": {"type": "integer", "minimum": 1}}, "type": "object",
     "properties": {"a": {"$ref": "#/$defs/pos"}}, "required": ["a"]},
    {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
               {"properties": {"b": {"type": "integer", "minimum": 4}}, "required": ["b"]}]},
    {"anyOf": [{"type": "string", "minLength": 2, "maxLength": 1}, {"type": "integer"}]},
    {"oneOf": [{"enum": []}, {"type": "boolean"}]},
    True,
    {},
    # bounds meeting at exactly one value
    {"type": "integer", "minimum": 5, "maximum": 5},
    {"type": "number", "minimum": 0.5, "maximum": 0.5},
    {"type": "integer", "multipleOf": 5, "minimum": 5, "maximum": 5},
    {"type": "number", "multipleOf": 0.5, "minimum": 0.5, "maximum": 0.5},
    {"type": "integer", "multipleOf": 0.5, "minimum": 1, "maximum": 1},
    {"type": "number", "multipleOf": 0.5, "minimum": -3.2, "maximum": -1.1},
    {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0.5, "maximum": 0.75},
    {"type": "number", "not": {"type": "string"}},
]


@pytest.mark.parametrize("schema", BUILDABLE)
def test_minimal_instance_validates(schema: Any) -> None:
    assert _valid(schema, minimal(schema)), (schema, minimal(schema))
    assert unsatisfiable(schema) is None


def test_required_properties_are_filled_around_the_given_value() -> None:
    built = with_value(TICKET, ["category"], "billing")
    assert built == {"category": "billing", "amount": 0} and _valid(TICKET, built)
    nested = {"type": "object", "required": ["meta", "out"],
              "properties": {"meta": {"type": "object", "required": ["id"],
                                      "properties": {"id": {"type": "string", "minLength": 2}}},
                             "out": {"type": "object", "required": ["v", "w"],
                                     "properties": {"v": {}, "w": {"type": "boolean"}}}}}
    built = with_value(nested, ["out", "v"], 42)
    assert built == {"meta": {"id": "aa"}, "out": {"v": 42, "w": False}}
    assert _valid(nested, built)


def test_property_order_follows_the_schema() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "required": ["c", "a"]}
    assert list(with_value(schema, ["b"], 1)) == ["a", "b", "c"]


def test_root_value_gets_the_missing_required_properties() -> None:
    built = with_value(TICKET, [], {"category": "tech"})
    assert built == {"category": "tech", "amount": 0}


def test_the_given_value_is_placed_as_is() -> None:
    """Validating it is the caller's job: a gold outside the enum is placed, not changed."""
    assert with_value(TICKET, ["category"], "refund")["category"] == "refund"


UNSATISFIABLE = [
    ({"type": "object", "properties": {"category": {"type": "string"}},
      "required": ["category", "amount"], "additionalProperties": False},
     "required property 'amount' is forbidden by additionalProperties: false"),
    ({"type": "object", "properties": {"a": False}, "required": ["a"]},
     "required property 'a' is forbidden (its schema is `false`)"),
    ({"enum": []}, "enum is empty"),
    ({"type": "object", "properties": {"c": {"enum": []}}, "required": ["c"]},
     "required property 'c': enum is empty"),
    ({"type": "integer", "minimum": 5, "maximum": 3}, "minimum 5, maximum 3"),
    ({"type": "number", "exclusiveMinimum": 1, "maximum": 1}, "exclusiveMinimum 1, maximum 1"),
    ({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2}, "no integer"),
    ({"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5}, "no multiple of 5"),
    ({"type": "string", "minLength": 5, "maxLength": 2}, "minLength 5 > maxLength 2"),
    ({"type": "array", "minItems": 3, "maxItems": 1}, "minItems 3 > maxItems 1"),
    ({"type": "array", "minItems": 1, "items": False}, "minItems 1, but item 0"),
    ({"type": "object", "required": ["a", "b"], "maxProperties": 1},
     "2 required properties > maxProperties 1"),
    ({"const": 1, "enum": [2, 3]}, "const 1 is not in enum"),
    ({"type": []}, "type is an empty list"),
    ({"anyOf": [{"enum": []}, {"type": "integer", "minimum": 2, "maximum": 1}]},
     "no branch of anyOf/oneOf"),
    ({"allOf": [{"type": "integer", "minimum": 3}, {"maximum": 2}]}, "minimum 3, maximum 2"),
    (False, "the schema is `false`"),
    ({"type": "integer", "minimum": 5, "exclusiveMaximum": 5}, "minimum 5, exclusiveMaximum 5"),
    ({"type": "integer", "exclusiveMinimum": 5, "maximum": 5}, "exclusiveMinimum 5, maximum 5"),
    ({"type": "integer", "minimum": 4.5, "maximum": 4.9}, "no integer"),
    ({"type": "number", "multipleOf": 0.1, "minimum": 0.35, "maximum": 0.36},
     "no multiple of 0.1"),
    ({"type": "integer", "multipleOf": 1.5, "minimum": 1, "maximum": 2}, "no multiple of 1.5"),
    ({"not": {}}, "`not` holds a schema that accepts every value"),
    ({"not": True}, "`not` holds a schema that accepts every value"),
    ({"type": "string", "not": {"description": "anything"}}, "accepts every value"),
    ({"type": "integer", "not": {"type": "number"}}, "`not` forbids type number"),
    ({"type": "object", "properties": {"a": {"not": {}}}, "required": ["a"]},
     "required property 'a': `not`"),
]


@pytest.mark.parametrize(("schema", "reason"), UNSATISFIABLE)
def test_unsatisfiable_schemas_say_why(schema: Any, reason: str) -> None:
    why = unsatisfiable(schema)
    assert why is not None and reason in why, why
    with pytest.raises(Unsatisfiable):
        minimal(schema)


@pytest.mark.parametrize(("low", "high", "value"), [
    ({"minimum": 5}, {"maximum": 5}, 5), ({"minimum": 4.5}, {"maximum": 5}, 5),
    ({"minimum": 5}, {"maximum": 5.5}, 5), ({"exclusiveMinimum": 4}, {"exclusiveMaximum": 6}, 5),
])
def test_integer_bounds_meeting_at_one_value_hold_it(low: dict, high: dict, value: int) -> None:
    """One integer within the bounds is an instance: a `<` written `<=` (or the other way)
    in the bounds check would call these unsatisfiable."""
    schema = {"type": "integer", **low, **high}
    assert minimal(schema) == value and unsatisfiable(schema) is None


def test_a_not_that_accepts_something_is_left_to_the_validator() -> None:
    """Only a `not` that accepts everything the node allows is a verdict; others build as
    if absent (the caller validates what is built)."""
    for schema in ({"not": {"type": "string"}}, {"type": "number", "not": {"type": "integer"}},
                   {"not": {"minimum": 3}}, {"not": False}):
        assert unsatisfiable(schema) is None


def test_optional_contradiction_is_not_unsatisfiable() -> None:
    """An optional property nobody can give is left out: the schema still has instances."""
    schema = {"type": "object", "properties": {"x": {"enum": []}}}
    assert unsatisfiable(schema) is None and minimal(schema) == {}


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "(a)\\1"},           # a backreference is not inverted
    {"$ref": "https://example.com/s.json"},           # a remote reference
])
def test_what_is_not_covered_is_unbuildable_not_unsatisfiable(schema: Any) -> None:
    with pytest.raises(Unbuildable) as e:
        minimal(schema)
    assert not isinstance(e.value, Unsatisfiable)
    assert unsatisfiable(schema) is None


def test_a_path_the_schema_forbids_is_unsatisfiable() -> None:
    schema = {"type": "object", "properties": {"answer": {}}, "additionalProperties": False}
    with pytest.raises(Unsatisfiable, match="property 'answr' is forbidden by "
                                            "additionalProperties: false"):
        with_value(schema, ["answr"], 1)


def test_at_path() -> None:
    assert at_path(TICKET, ["amount"]) == {"type": "number"}
    assert at_path(TICKET, ["nope"]) is False
    assert at_path({"type": "object"}, ["x", "y"]) is True
    ref = {"$defs": {"s": {"type": "string", "pattern": "^a"}},
           "properties": {"v": {"$ref": "#/$defs/s"}}}
    assert at_path(ref, ["v"]) == {"type": "string", "pattern": "^a"}


def test_recursion_is_bounded() -> None:
    schema = {"$defs": {"n": {"type": "object", "required": ["next"],
                              "properties": {"next": {"$ref": "#/$defs/n"}}}},
              "$ref": "#/$defs/n"}
    with pytest.raises(Unbuildable):
        minimal(schema)


def _nested_any_of(depth: int) -> Any:
    node: Any = {"enum": []}
    for _ in range(depth):
        node = {"anyOf": [node, {"allOf": [node]}]}
    return node


@pytest.mark.parametrize("schema", [
    _nested_any_of(30),                                   # 2**30 branches if unbounded
    {"type": "array", "minItems": 10 ** 9},
    {"type": "string", "minLength": 10 ** 9},
    {"type": "object", "minProperties": 10 ** 9},
    {"type": "number", "minimum": float("inf")},
])
def test_hostile_schemas_are_bounded(schema: Any) -> None:
    start = time.perf_counter()
    try:
        minimal(schema)
    except Unbuildable:
        pass
    assert time.perf_counter() - start < 2.0


def test_deep_all_of_is_bounded() -> None:
    node: Any = {"type": "integer"}
    for _ in range(5000):
        node = {"allOf": [node]}
    with pytest.raises(Unbuildable):
        minimal(node)
