"""Named schemas: static JSON Schema, or per item from a JMESPath plus a dialect converter.

Property order is part of the contract (it shows in prompts and decides generation order),
so nothing here sorts keys. The source vocabulary is the SCHEMA_SOURCES registry: a class
registers itself, and `SchemaSource` is built from it.
"""

from __future__ import annotations

import json
import reprlib
from functools import lru_cache
from typing import Annotated, Any, Callable, Literal

import jsonschema_rs
from jsonschema import FormatChecker
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from pydantic import AfterValidator, Field, field_validator

from vbw.task.base import JMESPathExpr, StrictModel, field_names, search
from vbw.task.refs import ref_problem
from vbw.task.kinds import BaseSchemaSource
from vbw.task.registry import Registry
from vbw.task.schema.cache import VERDICTS
from vbw.task.schema.keywords import TYPES, keyword_problem
from vbw.task.schema.patterns import pattern_problem
from vbw.validation import placed

PY_CHECKED = 1_000  # subschemas; a larger schema is checked by jsonschema-rs (speed)
_ANY = list(TYPES)
_BFCL_TYPES: dict[str, Any] = {"dict": "object", "float": "number", "tuple": "array", "any": _ANY}
_BFCL_ORDER = ("type", "description", "enum", "properties", "additionalProperties",
               "required", "items")


def bfcl_to_json_schema(node: Any) -> Any:
    """Convert a BFCL parameter node to JSON Schema (see the demo-tasks spec for the rules)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    if "type" in node:
        t = node["type"]
        out["type"] = _BFCL_TYPES.get(t, t) if isinstance(t, str) else t
    for key in ("description", "enum"):
        if key in node:
            out[key] = node[key]
    if "properties" in node:
        out["type"] = "object"
        out["properties"] = {k: bfcl_to_json_schema(v) for k, v in node["properties"].items()}
        out["additionalProperties"] = False
        if node.get("required"):
            out["required"] = node["required"]
    if "items" in node:
        out["items"] = bfcl_to_json_schema(node["items"])
    return {k: out[k] for k in _BFCL_ORDER if k in out}


def schema_key(schema: Any) -> str:
    """Cache key that keeps property order (two orders are two different contracts):
    engines cache compiled grammars by it, scoring its jsonschema validators."""
    return json.dumps(schema, ensure_ascii=False)


def identity_dialect(node: Any) -> Any:
    return node


DIALECTS: dict[str, Callable[[Any], Any]] = {"json_schema": identity_dialect,
                                              "bfcl": bfcl_to_json_schema}


SCHEMA_SOURCES: Registry[StrictModel] = Registry("schema source", group="vbw.schemas")


def check_schema(schema: Any) -> str | None:
    """Why `schema` is not a valid JSON Schema under its own draft (a keyword the draft
    does not know included), holds a reference outside itself or one that loops in
    place, or a pattern the linear-time regex engine refuses; None if none."""
    if not isinstance(schema, dict):
        return f"a schema must be an object, got {type(schema).__name__}"
    cls = validator_for(schema)
    problem, nodes = keyword_problem(schema, cls)  # first: it bounds the nesting below
    if problem:
        return problem
    digest = VERDICTS.digest(schema)  # a schema checked valid in an earlier run is skipped
    if digest is None or not VERDICTS.known_valid(digest):
        problem = _meta_problem(schema, cls) if nodes <= PY_CHECKED \
            else _fast_meta_problem(schema)
        if problem:
            return problem
        if digest is not None:
            VERDICTS.remember(digest)
    return ref_problem(schema, cls.META_SCHEMA) or pattern_problem(schema)


def _meta_problem(schema: dict[str, Any], cls: Any) -> str | None:
    """jsonschema's check of `schema` against its draft's metaschema."""
    try:
        cls.check_schema(schema, format_checker=_meta_formats(cls))
    except SchemaError as e:
        where = "/".join(str(p) for p in e.path)
        return f"not a valid JSON Schema{' at ' + where if where else ''}: {e.message}"
    return None


def _fast_meta_problem(schema: dict[str, Any]) -> str | None:
    """jsonschema-rs's check against the same metaschema, for a schema too large for
    jsonschema's to check in reasonable time."""
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as e:
        return f"not a valid JSON Schema: {' '.join(str(e).split(chr(10))[0].split())}"
    except Exception as e:  # noqa: BLE001 - e.g. a $schema it does not know
        return f"not a valid JSON Schema: {' '.join(str(e).split())[:200]}"
    return None


@lru_cache(maxsize=None)
def _meta_formats(cls: Any) -> FormatChecker:
    """The formats `cls`'s metaschema checks, but `regex`: that one compiles `pattern` and
    `patternProperties` with Python's `re` (which refuses `\\p{L}` and `\\u{...}`, and
    recursed past its limit on 500 nested groups), where vbw runs them on RE2
    (`pattern_problem` checks them there)."""
    base = validator_for(cls.META_SCHEMA, default=cls).FORMAT_CHECKER
    formats = FormatChecker(formats=())
    formats.checkers = {k: v for k, v in base.checkers.items() if k != "regex"}
    return formats


def _valid_schema(schema: dict[str, Any]) -> dict[str, Any]:
    problem = check_schema(schema)
    if problem:
        raise placed(problem)  # it names where in the schema: no dump of the whole
    return schema


@SCHEMA_SOURCES.register
class StaticSchema(BaseSchemaSource):
    """One JSON Schema for every item."""

    kind: Literal["static"]
    schema_: Annotated[dict[str, Any], AfterValidator(_valid_schema)] = Field(alias="schema")

    def for_item(self, fields: dict[str, Any]) -> dict[str, Any]:
        return self.schema_


@SCHEMA_SOURCES.register
class PerItemSchema(BaseSchemaSource):
    """A schema read from each item's fields by JMESPath, converted from a named dialect."""

    kind: Literal["per_item"]
    path: JMESPathExpr
    dialect: str = Field(default="json_schema", json_schema_extra={"enum": list(DIALECTS)})

    @field_validator("dialect")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in DIALECTS:
            raise ValueError(f"unknown dialect {v!r}; valid: {', '.join(DIALECTS)}")
        return v

    def for_item(self, fields: dict[str, Any]) -> dict[str, Any]:
        raw = search(self.path, fields)
        if not isinstance(raw, dict):
            gave = ("nothing" if raw is None
                    else f"{type(raw).__name__} {reprlib.repr(raw)}, not an object")
            raise ValueError(f"path {self.path!r} gave {gave}; the item's fields are: "
                             f"{field_names(fields)}")
        schema = DIALECTS[self.dialect](raw)
        # checked as each item is built, so in every mode, before any scoring: no
        # reference outside the schema, no pattern the linear-time engine refuses
        problem = (ref_problem(schema, validator_for(schema).META_SCHEMA)
                   or pattern_problem(schema))
        if problem:
            raise ValueError(problem)
        return schema



@SCHEMA_SOURCES.register
class CallsSchema(BaseSchemaSource):
    """A list of function calls built from the item's list of functions (at JMESPath
    `functions`, each with a `name` and its `parameters`, converted from `dialect`): an
    object whose property `key` holds an array of calls, each call an object whose one
    property is the name of one function and holds that function's arguments (BFCL's
    `{name: arguments}` form; one `anyOf` branch per function, the branch itself when
    there is one function). `min_items`/`max_items` bound the number of calls."""

    kind: Literal["calls"]
    functions: JMESPathExpr
    dialect: str = Field(default="json_schema", json_schema_extra={"enum": list(DIALECTS)})
    key: str = "calls"
    min_items: int = Field(default=1, ge=0)
    max_items: int | None = Field(default=None, ge=1)

    @field_validator("dialect")
    @classmethod
    def _known(cls, v: str) -> str:
        return PerItemSchema._known(v)

    def for_item(self, fields: dict[str, Any]) -> dict[str, Any]:
        raw = search(self.functions, fields)
        if not isinstance(raw, list) or not raw:
            raise ValueError(f"path {self.functions!r} gave {reprlib.repr(raw)}, not a "
                             f"non-empty list of functions; the item's fields are: "
                             f"{field_names(fields)}")
        branches = []
        for i, fn in enumerate(raw):
            if not (isinstance(fn, dict) and isinstance(fn.get("name"), str)
                    and isinstance(fn.get("parameters"), dict)):
                raise ValueError(f"path {self.functions!r}: function {i} has no string "
                                 "`name` and object `parameters`")
            args = DIALECTS[self.dialect](fn["parameters"])
            branches.append({"type": "object", "properties": {fn["name"]: args},
                             "required": [fn["name"]], "additionalProperties": False})
        calls: dict[str, Any] = {"type": "array",
                                 "items": branches[0] if len(branches) == 1
                                 else {"anyOf": branches}}
        if self.min_items:
            calls["minItems"] = self.min_items
        if self.max_items is not None:
            calls["maxItems"] = self.max_items
        schema = {"type": "object", "properties": {self.key: calls},
                  "required": [self.key], "additionalProperties": False}
        problem = (ref_problem(schema, validator_for(schema).META_SCHEMA)
                   or pattern_problem(schema))
        if problem:
            raise ValueError(problem)
        return schema


SchemaSource = SCHEMA_SOURCES.union()
SCHEMA_KINDS = SCHEMA_SOURCES.classes
