"""The BFCL dialect converter: type names, kept and dropped keys, key order, recursion."""

from __future__ import annotations

import json

from tests.conftest import TASK_CONF
from vbw.task.runner import load_task
from vbw.task.schemas import PerItemSchema, StaticSchema, bfcl_to_json_schema, schema_key


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
