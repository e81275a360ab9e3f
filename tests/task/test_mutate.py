"""vbw.task.mutate: each mutation breaks one keyword, exactly at its boundary, and only
instances the validator calls invalid are kept."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from vbw.task.mutate import MOST, mutations

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["n", "s", "e"],
          "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10},
                         "s": {"type": "string", "minLength": 2, "maxLength": 4,
                               "pattern": "^[a-z]+$"},
                         "e": {"enum": ["red", "blue"]},
                         "xs": {"type": "array", "minItems": 1, "maxItems": 2,
                                "items": {"type": "number", "exclusiveMaximum": 5}}}}
VALUE = {"n": 5, "s": "abc", "e": "red", "xs": [1.5]}


def is_valid(v):
    return Draft202012Validator(SCHEMA).is_valid(v)


def test_one_keyword_broken_per_mutation_at_the_boundary():
    found = {(m.keyword, m.where): m.value for m in mutations(SCHEMA, VALUE, is_valid)}
    assert found[("minimum", "/n")]["n"] == 0 and found[("maximum", "/n")]["n"] == 11
    assert found[("minLength", "/s")]["s"] == "a"  # minLength 2: one character short
    assert found[("maxLength", "/s")]["s"] == "abcxx"  # maxLength 4: one character over
    assert found[("exclusiveMaximum", "/xs/0")]["xs"] == [5]  # the bound itself
    assert found[("maxItems", "/xs")]["xs"] == [1.5, 1.5, 1.5]
    assert found[("minItems", "/xs")]["xs"] == []
    assert "e" not in found[("required", "/")]
    assert found[("additionalProperties", "/")]["vbw_extra"] == 1
    assert found[("enum", "/e")]["e"] not in ("red", "blue")
    assert isinstance(found[("type", "/n")]["n"], str)
    assert ("pattern", "/s") in found
    for value in found.values():
        assert not is_valid(value)
    assert is_valid(VALUE)  # the original is left as it was


def test_a_mutation_that_stays_valid_is_dropped():
    schema = {"type": "object", "properties": {"n": {"enum": ["not_in_enum", 1]}}}
    found = mutations(schema, {"n": 1}, Draft202012Validator(schema).is_valid)
    assert [(m.keyword, m.where) for m in found] == [("type", "/")]  # the enum one is valid


def test_at_most_MOST_mutations():
    wide = {"type": "object", "properties": {f"p{i}": {"type": "integer", "minimum": 0,
                                                       "maximum": 9} for i in range(40)}}
    value = {f"p{i}": 1 for i in range(40)}
    assert len(mutations(wide, value, Draft202012Validator(wide).is_valid)) == MOST
