"""Hostile task schemas in mode=check: misspelt keywords, patterns Python's `re` cannot
take, verdicts on edge schemas, and schemas that make the checks' work explode.

Each case writes a three-item task whose schema is per item (read from the JSON lines
data, as BFCL's are) or static (in the YAML), and runs `mode=check` on it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import yaml

from tests.hostile4 import Case, Make

ITEMS = 3


def write_task(folder: Path, schema: dict[str, Any], per_item: bool = True,
               gold: Any = 1) -> Path:
    """A task of ITEMS items whose answer schema is `schema` (each item's own copy when
    `per_item`), with the gold at property `answer`; returns the YAML's path."""
    data = folder / "items.jsonl"
    with data.open("w", encoding="utf-8") as f:
        for i in range(ITEMS):
            row = {"id": f"i{i}", "text": f"Question {i}?", "gold": gold}
            if per_item:
                row["schema"] = schema
            f.write(json.dumps(row) + "\n")
    source = ({"kind": "per_item", "path": "schema"} if per_item
              else {"kind": "static", "schema": schema})
    task = {"name": "hostile_schema",
            "dataset": {"path": str(data), "id": {"kind": "path", "path": "id"},
                        "fields": {"text": "text", **({"schema": "schema"} if per_item
                                                      else {})},
                        "gold": {"path": "gold"}},
            "prompts": {"free": "{{ text }}", "json": "{{ text }} {{ schema | json }}",
                        "package": "{{ schema | json }}"},
            "schemas": {"answer": source},
            "answer_schema": "answer",
            "extract": {"free": [{"kind": "last_number"}], "json": {"path": "answer"}},
            "coerce": {"kind": "number"},
            "check": {"kind": "numeric"}}
    path = folder / "t.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def answer_schema(answer: Any = None, **others: Any) -> dict[str, Any]:
    """An object with a required `answer` (an integer unless given) and other required
    properties."""
    props = {"answer": answer if answer is not None else {"type": "integer"}, **others}
    return {"type": "object", "properties": props, "required": list(props)}


def check(schema: dict[str, Any], per_item: bool = True) -> Make:
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        return [f"task.files=[{write_task(folder, schema, per_item)}]", "mode=check"]
    return make


def _nested_groups(n: int) -> str:
    return "(" * n + "a" + ")" * n


def _ref_doubling(levels: int) -> dict[str, Any]:
    """$defs d0..d{levels}, each an allOf of two references to the next: 2**levels paths."""
    defs: dict[str, Any] = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2}
                            for i in range(levels)}
    defs[f"d{levels}"] = {"type": "integer"}
    return {**answer_schema({"$ref": "#/$defs/d0"}), "$defs": defs}


def _big_all_of(parts: int, props: int) -> dict[str, Any]:
    return {**answer_schema(), "allOf": [
        {"properties": {f"p{j}": {"type": "string"} for j in range(props)}}
        for _ in range(parts)]}


def _two_enums(n: int, overlap: bool) -> dict[str, Any]:
    low = -(n - 2) if overlap else n  # overlapping: both hold 0 and 1 (the gold)
    return answer_schema({"allOf": [{"enum": list(range(n))},
                                    {"enum": list(range(low, low + n))}]})


CASES = [
    Case("typo keywords", "`requird` at the root of a static schema",
         check({"type": "object", "properties": {"answer": {"type": "integer"}},
                "requird": ["answer"]}, per_item=False), seconds=20),
    Case("typo keywords", "`typ` in a property of a per-item schema",
         check(answer_schema({"typ": "number"})), seconds=20),
    Case("typo keywords", "`propertise` under allOf",
         check({**answer_schema(), "allOf": [{"propertise": {}}]}), seconds=20),
    Case("typo keywords", "`minimun` in an array's items",
         check(answer_schema(xs={"type": "array", "items": {"minimun": 1}})), seconds=20),
    Case("typo keywords", "annotations and x- extensions pass",
         check({**answer_schema({"type": "integer", "title": "A", "x-unit": "kg",
                                 "examples": [{"typ": 1}]}), "$comment": "c"}),
         rc=0, lines=0, seconds=20),
    Case("7 schema patterns", "a pattern of 500 nested groups",
         check(answer_schema(code={"type": "string", "pattern": _nested_groups(500)})),
         rc=0, lines=0, seconds=20),
    Case("7 schema patterns", "\\p{L} and \\u{41} in a pattern",
         check(answer_schema(code={"type": "string", "pattern": "^\\p{L}\\u{41}$"})),
         rc=0, lines=0, seconds=20),
    Case("7 schema patterns", "a backreference RE2 refuses",
         check(answer_schema(code={"type": "string", "pattern": "(a)\\1"})), seconds=20),
    Case("8 check verdicts", "multipleOf 0.5 with both bounds at 0.5",
         check(answer_schema(step={"type": "number", "multipleOf": 0.5, "minimum": 0.5,
                                   "maximum": 0.5})), rc=0, lines=0, seconds=20),
    Case("8 check verdicts", "integer bounds meeting at 5",
         check(answer_schema(five={"type": "integer", "minimum": 5, "maximum": 5})),
         rc=0, lines=0, seconds=20),
    Case("8 check verdicts", "not: {} (accepts nothing)",
         check(answer_schema(never={"not": {}})), seconds=20),
    Case("8 check verdicts", "$ref '#' at the root",
         check({**answer_schema(), "$ref": "#"}), seconds=20),
    Case("8 check verdicts", "$defs a: {$ref: '#/$defs/a'}",
         check({**answer_schema({"$ref": "#/$defs/a"}),
                "$defs": {"a": {"$ref": "#/$defs/a"}}}), seconds=20),
    Case("9 schema work", "two 40,000-value enums sharing the gold",
         check(_two_enums(40_000, overlap=True)), rc=0, lines=0, seconds=30),
    Case("9 schema work", "two disjoint 40,000-value enums",
         check(_two_enums(40_000, overlap=False)), seconds=30),
    Case("9 schema work", "allOf of 60 parts of 300 properties (18,000 subschemas)",
         check(_big_all_of(60, 300)), rc=0, lines=0, seconds=30),
    Case("9 schema work", "allOf of 100 parts of 300 properties (over 20,000 subschemas)",
         check(_big_all_of(100, 300)), seconds=20),
    Case("9 schema work", "$refs doubling over 25 levels (2**25 paths)",
         check(_ref_doubling(25)), rc=0, lines=0, seconds=20),
]
