"""Validity checks: one compiled validator per distinct schema, found by the schema
object's id (no re-serialising per check), with JSON Schema's integers."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema.validators import validator_for

from vbw.replay import read_replay
from vbw.task import validity
from vbw.task.extract import first_json_object
from vbw.task.runner import load_task
from vbw.task.validity import Validators
from vbw.task.jsontext.values import JsonBigInt

ROOT = Path(__file__).resolve().parents[2]


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


# -- jsonschema-rs agrees with jsonschema wherever vbw lets it decide -------------------------

def _committed() -> list[tuple[Path, Path]]:
    """(task file, replay) for every committed replay: replays/** under the bundled tasks,
    examples/*/replays/** under the example's own task folder."""
    out = [(ROOT / "conf" / "task" / f"{p.relative_to(ROOT / 'replays').parts[0]}.yaml", p)
           for p in sorted((ROOT / "replays").glob("*/*/*.jsonl"))]
    for p in sorted(ROOT.glob("examples/*/replays/*/*/*.jsonl")):
        conf = p.parents[3]
        out.append((conf / "task" / f"{p.parts[-3]}.yaml", p))
    return out


@pytest.mark.parametrize("task_file,replay_file", _committed(),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_jsonschema_rs_gives_jsonschema_s_verdict_on_every_committed_output(
        task_file: Path, replay_file: Path) -> None:
    """Every schema of every item against every arm output of the item (the first JSON
    object of each text) through both validators: identical verdicts; and every schema of
    the committed tasks is one jsonschema-rs decides."""
    task = load_task(task_file)
    replay = read_replay(replay_file)
    items = {it.id: it for it in task.items(None, only={r.id for r in replay.records})}
    compared = fallback = 0
    for rec in replay.records:
        item = items.get(rec.id)
        if item is None:
            continue
        for name, schema in item.schemas.items():
            py = validity._json_integers(validator_for(schema))(schema)
            rs = validity._fast(schema, validator_for(schema))
            if rs is None:
                fallback += 1
                continue
            for arm in rec.arms.values():
                obj = first_json_object(arm.text) if arm.text else None
                if obj is None or not validity.plain(obj):
                    continue
                assert rs.is_valid(obj) == py.is_valid(obj), (rec.id, name, arm.text)
                compared += 1
    assert compared > 0 and fallback == 0


@pytest.mark.parametrize("schema,instance", [
    ({"type": "integer"}, 1.0), ({"type": "integer"}, True), ({"enum": [1]}, 1.0),
    ({"enum": [1]}, True), ({"const": False}, 0), ({"enum": [{"a": 1}]}, {"a": 1.0}),
    ({"maximum": 1}, 1.0000000000000002), ({"type": "string", "maxLength": 1}, "😀"),
    ({"type": "string", "maxLength": 1}, "\ud800"), ({"type": "array", "items": False}, []),
    ({"prefixItems": [{"type": "string"}], "items": False}, ["a", 1]),
    ({"additionalProperties": {"type": "null"}}, {"a": None, "b": 0}),
    ({"anyOf": [{"type": "string"}, {"minimum": 3}]}, 2),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 2),
    ({"type": ["number", "null"], "exclusiveMinimum": 0}, 0),
])
def test_jsonschema_rs_corner_cases_agree(schema: dict, instance: object) -> None:
    """Where JSON equality, integer-valued floats, bounds and string lengths could part the
    two validators; each case through Validators (which picks jsonschema-rs) and jsonschema."""
    assert validity._fast(schema, validator_for(schema)) is not None
    assert Validators().is_valid(schema, instance) == \
        validity._json_integers(validator_for(schema))(schema).is_valid(instance)


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^\\d$"}, {"format": "email"}, {"multipleOf": 0.1},
    {"uniqueItems": True}, {"$ref": "#/$defs/a", "$defs": {"a": {}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"},
    {"properties": {"a": {"pattern": "x"}}}, {"exclusiveMaximum": True},
])
def test_jsonschema_decides_what_jsonschema_rs_might_decide_differently(schema: dict) -> None:
    assert validity._fast(schema, validator_for(schema)) is None


def test_values_jsonschema_rs_does_not_take_go_to_jsonschema() -> None:
    v = Validators()
    schema = {"type": "object", "properties": {"a": {"type": "number"}}}
    assert v.is_valid(schema, {"a": float("nan")}) and v.is_valid(schema, {"a": 2 ** 70})
    assert not validity.plain({"a": float("inf")}) and not validity.plain({1: 2})
    assert not validity.plain(JsonBigInt("1" * 5000)) and validity.plain({"a": [1, "x", None]})
