"""JSON Schema `pattern` and `patternProperties` on RE2, like every other regex vbw runs.

How it works and why: docs/design.md, section vbw.task.schema.patterns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import ValidationError

from vbw.task.regex import compile_schema_regex

# Keywords whose values are data, not schemas: a "pattern" key inside them is not one.
_DATA = frozenset({"enum", "const", "default", "examples"})


def pattern_problem(schema: Any) -> str | None:
    """Why a schema's patterns cannot run on the linear-time engine, or None."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    unevaluated = pattern_properties = None
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        at = f" at {where.lstrip('/')}" if where else ""
        if isinstance(node.get("pattern"), str):
            problem = _compiles(node["pattern"])
            if problem:
                return f"pattern {node['pattern']!r}{at}: {problem}"
        if isinstance(node.get("patternProperties"), dict):
            pattern_properties = pattern_properties or f"patternProperties{at}"
            for key in node["patternProperties"]:
                problem = _compiles(key)
                if problem:
                    return f"patternProperties key {key!r}{at}: {problem}"
        if "unevaluatedProperties" in node:
            unevaluated = unevaluated or f"unevaluatedProperties{at}"
        stack.extend((v, f"{where}/{k}") for k, v in node.items() if k not in _DATA)
    if unevaluated and pattern_properties:
        return (f"{unevaluated} with {pattern_properties} is not supported (it would match "
                "the patterns on a backtracking engine): use additionalProperties")
    return None


def _compiles(pattern: str) -> str | None:
    try:
        compile_schema_regex(pattern)
    except ValueError as e:
        return str(e)
    return None


def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and \
            compile_schema_regex(patrn).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def pattern_properties(validator: Any, patterns: Any, instance: Any,
                       schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        rx = compile_schema_regex(patrn)
        for key, value in instance.items():
            if rx.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def additional_properties(validator: Any, allowed: Any, instance: Any,
                          schema: Any) -> Iterator[Any]:
    """The keys neither `properties` nor a `patternProperties` pattern covers must be
    valid against `allowed` (a schema, or a boolean)."""
    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = [compile_schema_regex(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance
              if k not in named and not any(rx.search(k) is not None for rx in patterns)]
    if validator.is_type(allowed, "object"):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif allowed is False and extras:
        yield ValidationError(f"additional properties are not allowed: {extras!r}")


KEYWORDS = {"pattern": pattern, "patternProperties": pattern_properties,
            "additionalProperties": additional_properties}
