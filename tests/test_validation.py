"""YAML loading refuses a key given twice in one mapping (PyYAML would keep the last), with
one line naming file, line and key; merge keys still work and the bundled files pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, ROOT, yaml_error
from vbw.errors import ConfigError
from vbw.validation import UniqueKeyLoader, check_duplicate_keys, load_yaml


def test_duplicate_top_level_key(tmp_path: Path) -> None:
    text = "name: t\ncheck: {kind: numeric}\nlabel: x\ncheck: {kind: string}\n"
    assert yaml_error(tmp_path, text) == \
        f"{tmp_path / 't.yaml'}:4: duplicate key 'check' (first at line 2)"


def test_duplicate_nested_key_names_its_lines(tmp_path: Path) -> None:
    text = ("name: t\n"
            "dataset:\n"
            "  path: a.jsonl\n"
            "  fields:\n"
            "    question: q\n"
            "    answer: a\n"
            "    question: other\n")
    assert yaml_error(tmp_path, text).endswith("t.yaml:7: duplicate key 'question' (first at line 5)")


def test_duplicate_in_flow_mapping_and_equal_spellings(tmp_path: Path) -> None:
    assert yaml_error(tmp_path, "a: {k: 1, k: 2}\n").endswith(":1: duplicate key 'k' (first at line 1)")
    assert yaml_error(tmp_path, "1: a\n0x1: b\n").endswith(":2: duplicate key 1 (first at line 1)")


def test_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("base: &b {x: 1, y: 2}\nother: &o {z: 3}\n"
                    "a:\n  <<: [*b, *o]\n  x: 9\n", encoding="utf-8")
    assert load_yaml(path)["a"] == {"x": 9, "y": 2, "z": 3}


def test_other_yaml_errors_unchanged(tmp_path: Path) -> None:
    assert yaml_error(tmp_path, "a: [1\n").startswith(f"{tmp_path / 't.yaml'}:2: invalid YAML:")


BUNDLED = sorted((ROOT / "conf").rglob("*.yaml")) + sorted(EXAMPLE.rglob("*.yaml"))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_files_have_no_duplicates(path: Path) -> None:
    check_duplicate_keys(path)
    assert yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader) == \
        yaml.safe_load(path.read_text(encoding="utf-8"))


def test_check_duplicate_keys_raises(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("defaults:\n  - _self_\nn: 1\nn: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml:4: duplicate key 'n' \(first at line 3\)"):
        check_duplicate_keys(path)


def test_errors_drop_pydantic_s_prefix_and_show_values_as_written() -> None:
    """A validator's message is ours, without pydantic's "Value error, "; a pattern is
    printed as the user wrote it, backslashes single, not repr'd (doubled)."""
    from pydantic import BaseModel

    from vbw.config import ArmsConfig
    from vbw.task.base import RegexPattern
    from vbw.validation import validate

    class M(BaseModel):
        pattern: RegexPattern

    with pytest.raises(ConfigError) as e:
        validate(M, {"pattern": r"(\d+"}, source="t.yaml")
    assert str(e.value) == ("t.yaml: pattern: not a valid regex for the linear-time engine "
                            r"(RE2): missing ): (\d+ (got '(\d+')")
    with pytest.raises(ConfigError) as e:
        validate(ArmsConfig, {"name": "x", "kinds": ["free"],
                              "max_tokens": {"free": 1, "json": 1, "package": 1}}, source="c")
    assert str(e.value).startswith("c: kinds: unknown arm kind 'free'; valid: ")
    assert "Value error" not in str(e.value)


def test_values_stay_bounded_and_on_one_line() -> None:
    from vbw.validation import _short

    assert _short(["a\\b", "x\ny", "it's"]) == "['a\\b', 'x\\ny', \"it's\"]"
    assert _short("z" * 1000) == "'" + "z" * 57 + "...'"
    assert _short({"k": [[["deep"]]]}) == "{'k': [[...]]}"


def test_a_placed_message_gets_no_dump_of_the_whole_value() -> None:
    """A validator whose message names the part at fault itself (`placed`) is shown
    without pydantic's input, which would be the whole schema or list."""
    from typing import Annotated, Any

    from pydantic import AfterValidator, BaseModel

    from vbw.validation import placed, validate

    def refuse(value: Any) -> Any:
        raise placed("properties.a.type: unknown type 'x'")

    class M(BaseModel):
        schema_: Annotated[dict, AfterValidator(refuse)]

    with pytest.raises(ConfigError) as e:
        validate(M, {"schema_": {"properties": {"a": {"type": "x"}}}}, source="t.yaml")
    assert str(e.value) == "t.yaml: schema_: properties.a.type: unknown type 'x'"


def test_an_object_is_named_by_its_title_never_its_class() -> None:
    """pydantic says `valid dictionary or instance of ArmRecord`; a user reads `should be
    an object`, with the model's title when it has one."""
    from pydantic import BaseModel, ConfigDict

    from vbw.validation import validate

    class Inner(BaseModel):
        model_config = ConfigDict(title="inner thing")
        a: int = 0

    class Untitled(BaseModel):
        a: int = 0

    class Outer(BaseModel):
        inner: Inner
        other: Untitled | None = None
        rows: list[Inner] = []

    for data, line in [({"inner": 3}, "inner: should be an object, the inner thing (got 3)"),
                       ({"inner": {}, "other": "x"}, "other: should be an object (got 'x')"),
                       ({"inner": {}, "rows": [{}, "y"]},
                        "rows.1: should be an object, the inner thing (got 'y')")]:
        with pytest.raises(ConfigError) as e:
            validate(Outer, data, source="t.yaml")
        assert str(e.value) == f"t.yaml: {line}"
        assert "Inner" not in str(e.value) and "Untitled" not in str(e.value)


def test_a_backend_s_unknown_key_lists_that_backend_s_keys() -> None:
    """The union of backends is told apart by `name` (its discriminator), not `kind`."""
    from vbw.config import RunConfig
    from vbw.validation import validate

    data = {"model": {"name": "m", "path": "m.gguf"}, "engine": {"name": "outlines"},
            "arms": {"name": "standard", "max_tokens": {"free": 8, "json": 8, "package": 8}},
            "backend": {"name": "openai", "base_url": "http://127.0.0.1:1/v1",
                        "model": "x", "base_ur": "y"}}
    with pytest.raises(ConfigError, match=r"backend\.openai\.base_ur: unknown key; did you mean "
                                          r"'base_url'\? valid: name, base_url, model"):
        validate(RunConfig, data, "config")
