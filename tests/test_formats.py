"""The published formats: the committed JSON Schema is what the generator makes, every
bundled task file satisfies it, and a broken task fails it (as it fails vbw itself)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.conftest import EXAMPLE, ROOT, TASK_CONF
from vbw.errors import ConfigError
from vbw.formats import FORMATS, HERE, published, render
from vbw.task.spec import TaskSpec
from vbw.validation import validate


def bundled_task_files() -> list[Path]:
    """Task YAML files shipped with vbw and the example's: YAML mappings with a top-level
    `name` (conf/task/ also holds a selection, demo.yaml)."""
    found = []
    for path in sorted([*ROOT.glob("conf/task/*.yaml"), *EXAMPLE.glob("task/*.yaml")]):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "name" in data:
            found.append(path)
    return found


def _validator() -> jsonschema.protocols.Validator:
    schema = published("task.schema.json")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@pytest.mark.parametrize("name", list(FORMATS))
def test_committed_file_is_what_the_generator_makes(name: str) -> None:
    committed = (HERE / name).read_text(encoding="utf-8")
    assert committed == render(name), f"vbw/formats/{name} is stale: run python -m vbw.formats"


def test_task_schema_header() -> None:
    schema = published("task.schema.json")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] and schema["description"]
    assert isinstance(_validator(), jsonschema.Draft202012Validator)


def test_every_bundled_task_validates() -> None:
    files = bundled_task_files()
    assert {p.stem for p in files} >= {"gsm8k", "bfcl_simple", "capitals"}
    validator = _validator()
    for path in files:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, f"{path.name}: {errors}"


def _gsm8k() -> dict[str, Any]:
    return yaml.safe_load((TASK_CONF / "gsm8k.yaml").read_text(encoding="utf-8"))


BROKEN: dict[str, Callable[[dict[str, Any]], None]] = {
    "unknown top-level key": lambda d: d.__setitem__("promts", d.pop("prompts")),
    "unknown nested key": lambda d: d["extract"]["free"][0].__setitem__("grop", 1),
    "bad kind": lambda d: d.__setitem__("check", {"kind": "fuzzy"}),
    "missing kind": lambda d: d.__setitem__("coerce", {}),
    "wrong type": lambda d: d["dataset"].__setitem__("first", "ten"),
    "bad name": lambda d: d.__setitem__("name", "has space"),
    "no schemas": lambda d: d.__setitem__("schemas", {}),
    "bad dialect": lambda d: d["schemas"].__setitem__(
        "answer", {"kind": "per_item", "path": "x", "dialect": "openapi"}),
    "normaliser as a list": lambda d: d.__setitem__(
        "check", {"kind": "membership", "string": ["strip", "lower"]}),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_task_fails_the_schema_and_vbw(case: str) -> None:
    data = copy.deepcopy(_gsm8k())
    BROKEN[case](data)
    assert not _validator().is_valid(data)
    with pytest.raises(ConfigError):
        validate(TaskSpec, data, source="t.yaml")


def test_membership_normaliser_without_kind_passes_the_schema() -> None:
    data = _gsm8k()
    data["check"] = {"kind": "membership", "string": {"normalize": ["strip", "lower"]}}
    assert _validator().is_valid(data)
    validate(TaskSpec, data, source="t.yaml")
