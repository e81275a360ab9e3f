"""Every keyword of a task's schema is one its JSON Schema draft knows, and every `type`
one of JSON Schema's types.

How it works and why: docs/design.md, section vbw.task.schema.keywords.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft3Validator

MAX_DEPTH = 64  # subschema levels (root = 0); a deeper schema is refused
MAX_NODES = 20_000  # subschemas (objects) in one schema; a larger one is refused

_CORE = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
                   "$vocabulary", "$comment", "$defs", "definitions"})
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated",
                          "readOnly", "writeOnly", "contentEncoding", "contentMediaType",
                          "contentSchema"})
# subschema positions: one schema, a list of schemas, a map of names to schemas
_ONE = frozenset({"additionalProperties", "additionalItems", "items", "contains", "not",
                  "if", "then", "else", "propertyNames", "unevaluatedItems",
                  "unevaluatedProperties", "contentSchema"})
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP = frozenset({"properties", "patternProperties", "$defs", "definitions",
                  "dependentSchemas", "dependencies"})
TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
_PYTHON = {"str": "string", "float": "number", "int": "integer", "bool": "boolean",
           "list": "array", "tuple": "array", "dict": "object", "None": "null"}
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
Where = tuple[str | int, ...]  # keys and list indices from the root


def vocabulary(cls: Any) -> frozenset[str]:
    """The keywords a schema checked by validator class `cls` may hold."""
    known = set(cls.VALIDATORS) | _CORE | _ANNOTATIONS
    if "if" in known:
        known |= {"then", "else"}
    if "dependentRequired" in known:  # 2019-09 on: contains' count bounds
        known |= {"minContains", "maxContains"}
    if "id" in cls.META_SCHEMA:  # draft 4 and before name a schema by `id`
        known.add("id")
    return frozenset(known)


def keyword_problem(schema: Any, cls: Any) -> tuple[str | None, int]:
    """The first keyword of `schema` (a dict) unknown to `cls`'s draft or `type` naming no
    JSON Schema type, a nesting deeper than MAX_DEPTH or more than MAX_NODES subschemas,
    as one line naming where (None when there is none); and the number of subschemas
    (objects) walked."""
    known = vocabulary(cls)
    stack: list[tuple[Any, Where, int]] = [(schema, (), 0)]
    nodes = 0
    while stack:
        node, where, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        nodes += 1
        if nodes > MAX_NODES:
            return (f"the schema has more than {MAX_NODES:,} subschemas (vbw's limit: its "
                    "checks, prompts and validators grow with the schema)", nodes)
        if depth > MAX_DEPTH:
            shown = location(where[:6]).removesuffix(": ")
            return f"{shown}...: schema nested deeper than {MAX_DEPTH} levels", nodes
        for key in node:
            if not isinstance(key, str):
                return f"{location(where)}keyword {clip(key)} is not a string", nodes
            if key not in known and not key.startswith("x-"):
                return f"{location(where)}{unknown(key, known)}", nodes
        bad = _unknown_type(node.get("type"), cls)
        if bad is not None:
            return f"{location((*where, 'type'))}{bad}", nodes
        children = [(sub, at, depth + 1) for sub, at in _subschemas(node, where)]
        stack.extend(reversed(children))  # depth first, in the schema's order
    return None, nodes


def unknown(key: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = (f"did you mean {close[0]!r}?" if close
            else "not a JSON Schema keyword; an extension must start with 'x-'")
    return f"unknown keyword {clip(key)} ({hint})"


def _unknown_type(value: Any, cls: Any) -> str | None:
    """Why a `type` value names a type JSON Schema does not have (`nubmer`), with a
    did-you-mean and the valid ones; None when it does (or is not a string or a list of
    them: the metaschema check words that)."""
    valid = TYPES + (("any",) if cls is Draft3Validator else ())
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    for name in names:
        if isinstance(name, str) and name not in valid:
            close = [_PYTHON[name]] if name in _PYTHON \
                else difflib.get_close_matches(name, valid, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return f"unknown type {clip(name)} ({hint}valid: {', '.join(valid)})"
    return None


def clip(key: Any) -> str:
    """A key or pattern for a one-line message: repr'd (control characters escaped), cut
    after 57 characters with `...`."""
    if isinstance(key, str) and len(key) > 60:
        return f"{key[:57]!r}..."
    return repr(key)


def _subschemas(node: dict[str, Any], where: Where) -> Iterator[tuple[Any, Where]]:
    for key, value in node.items():
        if key in _MAP and isinstance(value, dict):
            for name, sub in value.items():
                yield sub, (*where, key, str(name))
        elif key in _MANY and isinstance(value, list):
            for i, sub in enumerate(value):
                yield sub, (*where, key, i)
        elif key in _ONE:
            yield value, (*where, key)


def location(where: Where) -> str:
    """`properties.x.allOf[0]: ` for a path of keys and indices (a key that is not a plain
    name is quoted: `properties['a.b']`), '' for the root."""
    out = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                  if _NAME.match(part) and len(part) <= 60 else f"[{clip(part)}]"
                  for part in where)
    return f"{out.lstrip('.')}: " if out else ""
