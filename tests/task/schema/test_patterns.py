"""JSON Schema `pattern` and `patternProperties` on RE2: hostile patterns stay within a time
bound, patterns RE2 refuses are load-time errors naming the schema and the construct, and
on every string of every committed output the verdicts are jsonschema's own (Python's re)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from tests.conftest import portable_task
from tests.task.test_regex import committed_texts
from vbw.errors import ConfigError
from vbw.task.jsontext.scan import first_json_object
from vbw.task.runner import load_task
from vbw.task.schema.patterns import pattern_problem
from vbw.task.schema.sources import PerItemSchema, check_schema
from vbw.task.validity import Validators


def _string(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}


def _keys(pattern: str, additional: Any = False) -> dict[str, Any]:
    return {"type": "object", "patternProperties": {pattern: {"type": "integer"}},
            "additionalProperties": additional}


@pytest.mark.parametrize("schema,obj", [
    (_string(r"^(a|a)*$"), {"a": "a" * 31 + "b"}),
    (_string(r"^(a|a)*$"), {"a": "a" * 4999 + "b"}),
    (_string(r"^(\w+\s?)+$"), {"a": "ab " * 1700 + "!"}),
    (_keys(r"^(a|a)*$"), {"a" * 4999 + "b": 1}),
    ({"type": "object", "propertyNames": {"pattern": r"^(\w+\s?)+$"}}, {"ab " * 1700 + "!": 1}),
])
def test_hostile_schema_patterns_are_bounded(schema: dict, obj: dict) -> None:
    t = time.perf_counter()
    assert Validators().is_valid(schema, obj) is False
    assert time.perf_counter() - t < 1.0


def test_pattern_keywords_decide_as_the_spec_says() -> None:
    v = Validators()
    assert v.is_valid(_string(r"^\d{3}$"), {"a": "123"})
    assert not v.is_valid(_string(r"^\d{3}$"), {"a": "123\n"})  # ECMA's $: the very end
    assert v.is_valid(_string(r"\u00e9"), {"a": "caf\u00e9"})
    assert v.is_valid(_keys("^x"), {"xa": 1}) and not v.is_valid(_keys("^x"), {"xa": "s"})
    assert not v.is_valid(_keys("^x"), {"y": 1})  # covered by no pattern, none allowed
    assert v.is_valid(_keys("^x", {"type": "string"}), {"y": "s", "x": 2})
    assert not v.is_valid(_keys("^x", {"type": "string"}), {"y": 1})


@pytest.mark.parametrize("schema,expect", [
    (_string("a(?=b)"), "pattern 'a(?=b)' at properties/a: lookahead (?=...)"),
    (_keys(r"(\w)\1"), "patternProperties key '(\\\\w)\\\\1': backreference \\1"),
    # RE2 decides them, not Python's re (the metaschema's "regex" format is not checked)
    (_string("a++"), "possessive quantifier ++"),
    (_string("(?>a)"), "atomic group (?>...)"),
    ({"unevaluatedProperties": False, "patternProperties": {"a": {}}},
     "unevaluatedProperties with patternProperties is not supported"),
])
def test_refused_patterns_name_where_and_what(schema: dict, expect: str) -> None:
    problem = check_schema(schema)
    assert problem is not None and expect in problem, problem


@pytest.mark.parametrize("schema", [
    _string("(" * 500 + "a" + ")" * 500),  # Python's re: RecursionError (exit 3)
    _string("(" * 5000 + "a" + ")" * 5000),
    _string(r"^\p{L}+$"), _string(r"^\u{41}$"), _keys(r"^\p{Lu}"),  # re: "bad escape"
])
def test_patterns_re2_takes_are_valid(schema: dict) -> None:
    """The metaschema's `format: regex` would compile these with Python's re, which
    refuses `\\p{L}` and `\\u{...}` (the docs accept them: RE2 runs them) and recurses past
    its limit on deep nesting; vbw checks them on RE2 alone."""
    assert check_schema(schema) is None
    Validators().is_valid(schema, {"a": "A"})


def test_data_holding_a_pattern_key_is_not_a_pattern() -> None:
    assert pattern_problem({"enum": [{"pattern": "(?="}], "const": {"pattern": "(?="},
                            "properties": {"pattern": {"type": "string"}}}) is None


def test_a_task_whose_schema_pattern_is_refused_is_one_line(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["schemas"]["answer"]["schema"]["properties"]["reasoning"] = {
        "type": "string", "pattern": r"^(?!\s)"}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError) as e:
        load_task(path)
    msg = str(e.value)
    assert "\n" not in msg and "t.yaml" in msg and "schemas.answer" in msg, msg
    assert "negative lookahead (?!...)" in msg and "properties/reasoning" in msg, msg


# -- differential: every string of every committed output, jsonschema's re against RE2 ------
PATTERNS = [r"^\d+$", r"^-?\d+(\.\d+)?$", r"^[A-Z][a-z]+$", r"^[a-z_]+$", r"\s", r"^\S+$",
            r"^.{1,20}$", r"[0-9]", r"^[^ ]*$", r"^[A-Za-z ,.'-]+$", r"\d$",
            r"^[a-z]+(_[a-z]+)*$", r"^(true|false)$", r"[.!?]$"]


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def committed_strings() -> list[str]:
    """Every key and string value of the first JSON object of every committed output: what
    a schema's patterns meet. (Where a string ends in a newline, ECMA-262's `$`, which RE2
    keeps, does not match before it and Python's does: none of these does.)"""
    out: list[str] = []
    for text in committed_texts():
        _strings(first_json_object(text), out)
    return sorted(set(out))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_committed_string_validates_as_jsonschema_did(pattern: str) -> None:
    strings = committed_strings()
    assert len(strings) > 1500
    old_value = Draft202012Validator(_string(pattern))
    old_key = Draft202012Validator(_keys(pattern, {"type": "string"}))
    new = Validators()
    verdicts = set()
    for s in strings:
        verdict = old_value.is_valid({"a": s})
        assert new.is_valid(_string(pattern), {"a": s}) == verdict, (pattern, s[:200])
        assert new.is_valid(_keys(pattern, {"type": "string"}), {s: 1}) == \
            old_key.is_valid({s: 1}), (pattern, s[:200])
        verdicts.add(verdict)
    assert verdicts == {True, False}, pattern  # the pattern tells the strings apart


def test_a_per_item_schema_with_a_refused_pattern_fails_when_its_item_is_built() -> None:
    source = PerItemSchema(kind="per_item", path="f")
    assert source.for_item({"f": _string("^a$")}) == _string("^a$")
    with pytest.raises(ValueError, match=r"pattern '\(a\)\\\\1' at properties/a: backreference"):
        source.for_item({"f": _string(r"(a)\1")})
