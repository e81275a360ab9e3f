"""Validity checks: one compiled validator per distinct schema, found by the schema
object's id (no re-serialising per check), with JSON Schema's integers."""

from __future__ import annotations

import pytest

from vbw.task import validity
from vbw.task.validity import Validators
from vbw.task.jsonvalues import JsonBigInt


def test_a_schema_is_serialised_once_per_object(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = validity.schema_key
    monkeypatch.setattr(validity, "schema_key", lambda s: calls.append("k") or real(s))
    v = Validators()
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    for _ in range(100):
        assert v.is_valid(schema, {"a": 1}) and not v.is_valid(schema, {"a": "x"})
    assert len(calls) == 1
    twin = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert v.is_valid(twin, {"a": 2}) and len(calls) == 2
    assert v._by_id[id(twin)][1] is v._by_id[id(schema)][1]  # compiled once, shared
    other = {"properties": {"a": {"type": "string"}}}
    assert v.is_valid(other, {"a": "x"}) and not v.is_valid(other, {"a": 1})


def test_big_integers_are_integers() -> None:
    v = Validators()
    big = JsonBigInt("1" + "0" * 5000)
    assert v.is_valid({"type": "integer"}, big) and v.is_valid({"type": "number"}, big)
    assert not v.is_valid({"type": "string"}, big)
    assert v.is_valid({"minimum": 10, "maximum": 1e5000}, big)  # 1e5000 is a float: inf
    assert not v.is_valid({"maximum": 10}, big)
    assert v.is_valid({"multipleOf": 2}, big) and v.is_valid({"multipleOf": 0.5}, big)
    assert not v.is_valid({"multipleOf": 3}, big) and not v.is_valid({"multipleOf": 0.3}, big)
    assert v.is_valid({"multipleOf": 3}, 9) and not v.is_valid({"multipleOf": 2}, 9)


def test_an_object_too_deep_for_a_recursive_schema_is_invalid() -> None:
    deep: dict = {}
    for _ in range(2000):
        deep = {"a": deep}
    schema = {"type": "object", "additionalProperties": {"$ref": "#"}}
    assert not Validators().is_valid(schema, deep)
    assert Validators().is_valid(schema, {"a": {"a": {}}})
