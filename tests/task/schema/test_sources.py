"""The BFCL dialect converter: type names, kept and dropped keys, key order, recursion."""

from __future__ import annotations

import json

from tests.conftest import TASK_CONF
from vbw.task.runner import load_task
import pytest

from vbw.task.schema.sources import (CallsSchema, PerItemSchema, StaticSchema, bfcl_to_json_schema,
                              schema_key)


def test_bfcl_types_and_order() -> None:
    src = {"type": "dict", "required": ["a", "t"], "description": "d",
           "properties": {
               "a": {"type": "float", "default": 1.0, "description": "x"},
               "t": {"type": "tuple", "items": {"type": "any"}},
               "e": {"enum": ["x", "y"], "type": "string", "optional": True},
               "o": {"type": "dict", "properties": {"k": {"type": "integer"}}, "required": []},
           }}
    out = bfcl_to_json_schema(src)
    assert list(out) == ["type", "description", "properties", "additionalProperties", "required"]
    assert out["type"] == "object" and out["additionalProperties"] is False
    assert out["properties"]["a"] == {"type": "number", "description": "x"}
    assert out["properties"]["t"] == {"type": "array", "items": {"type": [
        "string", "number", "integer", "boolean", "array", "object", "null"]}}
    assert list(out["properties"]["e"]) == ["type", "enum"]
    assert out["properties"]["o"] == {"type": "object", "properties": {"k": {"type": "integer"}},
                                      "additionalProperties": False}  # empty required dropped
    assert list(out["properties"]) == ["a", "t", "e", "o"]            # never sorted


def test_properties_force_object_type() -> None:
    assert bfcl_to_json_schema({"type": "string", "properties": {}})["type"] == "object"


def test_bundled_bfcl_schema_rendering() -> None:
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    item = task.items(1)[0]
    assert json.dumps(item.schemas["arguments"]) == (
        '{"type": "object", "properties": {"base": {"type": "integer", "description": '
        '"The base of the triangle."}, "height": {"type": "integer", "description": '
        '"The height of the triangle."}, "unit": {"type": "string", "description": '
        '"The unit of measure (defaults to \'units\' if not specified)"}}, '
        '"additionalProperties": false, "required": ["base", "height"]}')


def test_static_and_per_item_sources() -> None:
    s = StaticSchema.model_validate({"kind": "static", "schema": {"type": "object"}})
    assert s.for_item({}) == {"type": "object"}
    p = PerItemSchema(kind="per_item", path="f.params")
    assert p.for_item({"f": {"params": {"type": "string"}}}) == {"type": "string"}


def test_schema_key_keeps_order() -> None:
    a = {"properties": {"b": {}, "a": {}}}
    b = {"properties": {"a": {}, "b": {}}}
    assert schema_key(a) != schema_key(b)


F = {"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}},
                                 "required": ["x"]}}
G = {"name": "m.g", "parameters": {"type": "dict", "properties": {"s": {"type": "string"}}}}


def test_calls_schema_one_branch_per_function() -> None:
    src = CallsSchema(kind="calls", functions="fns", dialect="bfcl", max_items=1)
    schema = src.for_item({"fns": [F, G]})
    calls = schema["properties"]["calls"]
    assert schema["required"] == ["calls"] and schema["additionalProperties"] is False
    assert calls["minItems"] == 1 and calls["maxItems"] == 1
    f, g = calls["items"]["anyOf"]
    assert f == {"type": "object", "properties": {"f": {
        "type": "object", "properties": {"x": {"type": "number"}},
        "additionalProperties": False, "required": ["x"]}},
        "required": ["f"], "additionalProperties": False}
    assert list(g["properties"]) == ["m.g"]
    one = CallsSchema(kind="calls", functions="fns", dialect="bfcl", key="c",
                      min_items=0).for_item({"fns": [F]})
    assert one["properties"]["c"] == {"type": "array", "items": f}  # no anyOf, no bounds


@pytest.mark.parametrize("fns", [None, [], [{"name": "f"}], [{"name": 1, "parameters": {}}]])
def test_calls_schema_refuses_what_is_no_list_of_functions(fns) -> None:
    with pytest.raises(ValueError, match="fns"):
        CallsSchema(kind="calls", functions="fns").for_item({"fns": fns})


def test_calls_schema_dialect_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown dialect 'nope'; valid: json_schema, bfcl"):
        CallsSchema(kind="calls", functions="fns", dialect="nope")


def _properties(n: int) -> dict:
    """A schema of n subschemas: the root and n - 1 properties (one of them invalid under
    the metaschema alone: `required: integerr`)."""
    return {"properties": {"bad": {"required": "integerr"},
                           **{f"p{i}": {} for i in range(n - 2)}}}


def test_a_large_schema_is_checked_by_jsonschema_rs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to PY_CHECKED subschemas jsonschema checks the schema (its messages); above,
    jsonschema-rs (90,000 subschemas: 150 s against 0.14 s), refusing the same."""
    from vbw.task.schema import sources as schemas

    used: list[str] = []
    for name in ("_meta_problem", "_fast_meta_problem"):
        real = getattr(schemas, name)
        monkeypatch.setattr(schemas, name, lambda *a, _r=real, _n=name: (used.append(_n),
                                                                         _r(*a))[1])
    at_cap = schemas.check_schema(_properties(schemas.PY_CHECKED))
    assert used == ["_meta_problem"] and at_cap is not None and "integerr" in at_cap
    over = schemas.check_schema(_properties(schemas.PY_CHECKED + 1))
    assert used[1:] == ["_fast_meta_problem"] and over is not None and "integerr" in over
    assert schemas.check_schema({"properties": {f"p{i}": {"type": "string"}
                                                for i in range(2 * schemas.PY_CHECKED)}}) is None
