"""Unknown JSON Schema keywords are refused wherever a schema is expected, with a
did-you-mean, and only there (property names and data are not keywords)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft3Validator, Draft4Validator, Draft7Validator, Draft202012Validator

from tests.conftest import REPLAYS, one_line_error, portable_task, run_vbw
from vbw.task.schema.keywords import MAX_DEPTH, MAX_NODES, keyword_problem, location
from vbw.task.schema.sources import check_schema

ANSWER = {"answer": {"type": "integer"}}


def _problem(schema: Any, cls: Any = Draft202012Validator) -> str | None:
    return keyword_problem(schema, cls)[0]


@pytest.mark.parametrize(("schema", "line"), [
    ({"type": "object", "properties": ANSWER, "requird": ["answer"]},
     "unknown keyword 'requird' (did you mean 'required'?)"),
    ({"properties": {"x": {"typ": "number"}}},
     "properties.x: unknown keyword 'typ' (did you mean 'type'?)"),
    ({"allOf": [{"type": "object"}, {"propertise": {}}]},
     "allOf[1]: unknown keyword 'propertise' (did you mean 'properties'?)"),
    ({"type": "array", "items": {"type": "number", "minimun": 0}},
     "items: unknown keyword 'minimun' (did you mean 'minimum'?)"),
])
def test_typos_are_named_with_where_and_a_suggestion(schema: Any, line: str) -> None:
    assert _problem(schema) == line
    assert check_schema(schema) == line  # the one check every mode runs


@pytest.mark.parametrize("where", [
    lambda s: {"properties": {"p": s}}, lambda s: {"patternProperties": {"^a": s}},
    lambda s: {"additionalProperties": s}, lambda s: {"items": s},
    lambda s: {"prefixItems": [True, s]}, lambda s: {"contains": s},
    lambda s: {"allOf": [s]}, lambda s: {"anyOf": [s]}, lambda s: {"oneOf": [s]},
    lambda s: {"not": s}, lambda s: {"if": s}, lambda s: {"if": {}, "then": s},
    lambda s: {"if": {}, "else": s}, lambda s: {"dependentSchemas": {"a": s}},
    lambda s: {"propertyNames": s}, lambda s: {"unevaluatedItems": s},
    lambda s: {"unevaluatedProperties": s}, lambda s: {"$defs": {"d": s}},
    lambda s: {"definitions": {"d": s}}, lambda s: {"contentSchema": s},
])
def test_every_subschema_position_is_walked(where: Any) -> None:
    problem = _problem(where({"typ": "string"}))
    assert problem is not None and problem.endswith(
        "unknown keyword 'typ' (did you mean 'type'?)")
    assert _problem(where({"type": "string"})) is None


def test_names_and_data_are_not_keywords() -> None:
    schema = {"type": "object",
              "properties": {"typ": {"type": "string"}, "requird": {}},  # property names
              "required": ["typ"],
              "enum": [{"typ": 1}], "const": {"minimun": 2}, "default": {"x": 1},
              "examples": [{"propertise": 3}],
              "title": "t", "description": "d", "$comment": "c", "deprecated": False,
              "readOnly": True, "writeOnly": False, "x-unit": {"typ": "anything"}}
    assert _problem(schema) is None


def test_without_a_close_keyword_the_extension_prefix_is_suggested() -> None:
    assert _problem({"nullable": True}) == (
        "unknown keyword 'nullable' (not a JSON Schema keyword; an extension must "
        "start with 'x-')")


def test_the_vocabulary_is_the_schema_draft() -> None:
    """`dependencies` and `additionalItems` mean something in draft-07, nothing in
    2020-12 (where a validator ignores them); draft-04 names a schema by `id`."""
    for old in ({"dependencies": {"a": ["b"]}}, {"additionalItems": False}):
        assert _problem(old, Draft7Validator) is None
        assert "unknown keyword" in (_problem(old) or "")
    assert _problem({"id": "x", "type": "string"}, Draft4Validator) is None
    assert _problem({"id": "x"}) is not None
    assert _problem({"minContains": 1, "contains": {}}) is None
    assert _problem({"minContains": 1, "contains": {}}, Draft7Validator) is not None


def _nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        node = {"not": node}
    return node


def test_nesting_is_bounded_at_max_depth() -> None:
    assert _problem(_nested(MAX_DEPTH)) is None
    problem = _problem(_nested(MAX_DEPTH + 1))
    assert problem == f"not.not.not.not.not.not...: schema nested deeper than {MAX_DEPTH} levels"
    assert check_schema(_nested(5000)) == problem  # no RecursionError anywhere


def test_subschemas_are_bounded_at_max_nodes() -> None:
    def schema(n: int) -> dict[str, Any]:  # the root and n - 1 properties
        return {"properties": {f"p{i}": {} for i in range(n - 1)}}
    assert keyword_problem(schema(MAX_NODES), Draft202012Validator) == (None, MAX_NODES)
    problem = _problem(schema(MAX_NODES + 1))
    assert problem is not None and f"more than {MAX_NODES:,} subschemas" in problem


def test_location_quotes_what_is_not_a_plain_name() -> None:
    assert location(()) == ""
    assert location(("properties", "a.b", "allOf", 0)) == "properties['a.b'].allOf[0]: "
    assert location(("properties", "x" * 100)).startswith("properties['xxx")
    assert len(location(("properties", "x" * 100))) < 80
    assert location(("properties", "a\nb")) == "properties['a\\nb']: "


def _gsm8k_with(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The gsm8k task, its answer schema changed by `edit`, written as t.yaml."""
    data = portable_task("gsm8k")
    edit(data["schemas"]["answer"]["schema"])
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_typo_is_one_line_in_check_mode(tmp_path: Path) -> None:
    path = _gsm8k_with(tmp_path, lambda s: s["properties"].update(answer={"typ": "integer"}))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert ("t.yaml: schemas.answer.static.schema: properties.answer: unknown keyword 'typ' "
            "(did you mean 'type'?)") in line


def test_a_typo_refuses_a_replay_too(tmp_path: Path) -> None:
    path = _gsm8k_with(tmp_path, lambda s: s.update(requird=["answer"]))
    replay = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"
    line = one_line_error(run_vbw(f"task.files=[{path}]", f"replay={replay}",
                                  f"hydra.run.dir={tmp_path}/o", cwd=tmp_path))
    assert "unknown keyword 'requird' (did you mean 'required'?)" in line


VALID_TYPES = "valid: string, number, integer, boolean, array, object, null"


@pytest.mark.parametrize(("schema", "line"), [
    ({"type": "nubmer"}, f"type: unknown type 'nubmer' (did you mean 'number'? {VALID_TYPES})"),
    ({"properties": {"n": {"type": ["integer", "nul"]}}},
     f"properties.n.type: unknown type 'nul' (did you mean 'null'? {VALID_TYPES})"),
    ({"items": {"type": "float"}},
     f"items.type: unknown type 'float' (did you mean 'number'? {VALID_TYPES})"),
    ({"type": "text"}, f"type: unknown type 'text' ({VALID_TYPES})"),
])
def test_an_unknown_type_lists_the_valid_ones(schema: Any, line: str) -> None:
    assert _problem(schema) == line
    assert check_schema(schema) == line


def test_type_names_and_draft_3_s_any_are_not_refused() -> None:
    assert _problem({"type": "object", "properties": {"type": {"type": "string"}}}) is None
    assert _problem({"type": ["string", "null"], "enum": ["nubmer", None]}) is None
    assert _problem({"type": "any"}, Draft3Validator) is None
    assert _problem({"type": "any"}) is not None


def test_an_unknown_type_is_one_line_without_a_dump_of_the_schema(tmp_path: Path) -> None:
    path = _gsm8k_with(tmp_path, lambda s: s["properties"].update(answer={"type": "nubmer"}))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert line == (f"vbw: error: {path}: schemas.answer.static.schema: "
                    "properties.answer.type: unknown type 'nubmer' (did you mean 'number'? "
                    f"{VALID_TYPES})")
