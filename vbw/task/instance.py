"""A minimal instance of a JSON Schema, optionally with a given value at a given path.

How it works and why: docs/design.md, section vbw.task.instance.
"""

from __future__ import annotations

import math
from typing import Any

from vbw.task.regexample import examples
from vbw.task.schema.keywords import clip
from vbw.task.schema.numbers import integer, number
from vbw.task.schema.walk import (DEPTH, Budget, TooMuchWork, Unbuildable, Unsatisfiable,
                                  is_num, json_type, merged, property_schema, resolve, same,
                                  search)

__all__ = ["Unbuildable", "Unsatisfiable", "at_path", "minimal", "unsatisfiable", "with_value"]

_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_NO = object()  # "no value given": a gold or answer may itself be null
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})
STEPS = 20_000  # schema nodes visited at most per build
SIZE = 10_000   # a minLength/minItems/minProperties above this is not built


def minimal(schema: Any, root: Any = None) -> Any:
    """A small instance of `schema` (see the module docstring for the failures)."""
    return with_value(schema, [], _NO, root)


def with_value(schema: Any, path: list[str], value: Any, root: Any = None) -> Any:
    """An instance of `schema` holding `value` at `path` (property names from the root;
    [] is the root itself, where an object value gets the missing required properties)."""
    root = root if root is not None else schema
    _refuse_heavy(root)
    try:
        return _build(schema, _Ctx(root), tuple(path), value, 0)
    except (TypeError, ValueError, OverflowError, RecursionError, AttributeError) as e:
        raise Unbuildable(f"the schema is not followed here ({type(e).__name__})") from None
    except TooMuchWork as e:
        _remember_heavy(root, e)
        raise


_HEAVY: dict[int, tuple[Any, str]] = {}  # id(root) -> (root, why); root kept alive
HEAVY_KEPT = 64


def _refuse_heavy(root: Any) -> None:
    """A schema document that ran out of its budget once is not built again: mode=check
    builds up to ten instances per item, and a static schema is one object for all."""
    seen = _HEAVY.get(id(root))
    if seen is not None and seen[0] is root:
        raise TooMuchWork(seen[1])


def _remember_heavy(root: Any, e: TooMuchWork) -> None:
    if len(_HEAVY) >= HEAVY_KEPT:
        _HEAVY.clear()
    _HEAVY[id(root)] = (root, str(e))


def unsatisfiable(schema: Any) -> str | None:
    """Why no instance of `schema` exists, or None (also when none could be built)."""
    try:
        minimal(schema)
    except Unsatisfiable as e:
        return str(e)
    except Unbuildable:
        return None
    return None


def at_path(schema: Any, path: list[str], root: Any = None) -> Any:
    """The subschema that governs `path` (through properties, patternProperties,
    additionalProperties, a local $ref and allOf); `True` where nothing constrains it."""
    root = root if root is not None else schema
    _refuse_heavy(root)
    budget = Budget()
    try:
        node = resolve(schema, root, 0, budget)
        for key in path:
            if isinstance(node, bool):
                return node
            node = resolve(property_schema(merged(node, root, 0, budget), key), root, 0,
                           budget)
    except (TypeError, ValueError, RecursionError, AttributeError) as e:
        raise Unbuildable(f"the schema is not followed here ({type(e).__name__})") from None
    except TooMuchWork as e:
        _remember_heavy(root, e)
        raise
    return node


# -- building ------------------------------------------------------------------------------

class _Ctx:
    """One build: the schema document ($refs resolve in it) and the steps left, so a
    hostile schema (anyOf nested in anyOf, each failing late) costs at most STEPS nodes."""

    def __init__(self, root: Any) -> None:
        self.root, self.steps, self.budget = root, STEPS, Budget()


def _build(node: Any, ctx: _Ctx, path: tuple[str, ...], value: Any, depth: int) -> Any:
    ctx.steps -= 1
    if depth > DEPTH or ctx.steps < 0:
        raise Unbuildable("schema nested too deeply or too large to build")
    if node is False:
        raise Unsatisfiable("the schema is `false`")
    if node is True:
        node = {}
    if not isinstance(node, dict):
        raise Unbuildable("a subschema is not an object")
    node = merged(node, ctx.root, depth, ctx.budget)
    if "not" in node:
        _check_not(node)
    branches = node.get("anyOf", node.get("oneOf"))
    if isinstance(branches, list):
        return _first_branch(node, branches, ctx, path, value, depth)
    if "enum" in node or "const" in node:
        _check_choices(node)
    if value is not _NO and not path and not isinstance(value, dict):
        return value  # the given value, as it is: the caller validates it
    kind = _type(node, path, value)
    if kind == "object":
        return _object(node, ctx, path, value, depth)
    if path:
        raise Unbuildable(f"the schema at {path[0]!r} is not an object")
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return _enum_value(node)
    return {"null": lambda: None, "boolean": lambda: False, "integer": lambda: integer(node),
            "number": lambda: number(node), "string": lambda: _string(node),
            "array": lambda: _array(node, ctx, depth)}[kind]()


def _first_branch(node: dict[str, Any], branches: list[Any], ctx: _Ctx,
                  path: tuple[str, ...], value: Any, depth: int) -> Any:
    if not branches:
        raise Unsatisfiable("anyOf/oneOf has no branch")
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    reasons = []
    unsure = False
    for branch in branches:
        try:
            return _build({"allOf": [rest, branch]}, ctx, path, value, depth + 1)
        except Unsatisfiable as e:
            reasons.append(str(e))
        except Unbuildable:
            unsure = True
    if unsure:
        raise Unbuildable("no branch of anyOf/oneOf could be built")
    raise Unsatisfiable(f"no branch of anyOf/oneOf can hold a value ({reasons[0]})")


def _check_not(node: dict[str, Any]) -> None:
    """Refuse a `not` whose schema accepts every value the node's `type` allows (`{}`,
    `true`, only annotations, or a `type` covering the node's)."""
    sub = node["not"]
    if sub is True or (isinstance(sub, dict) and sub.keys() <= _ANNOTATIONS):
        raise Unsatisfiable("`not` holds a schema that accepts every value")
    if not isinstance(sub, dict) or sub.keys() - _ANNOTATIONS != {"type"}:
        return
    mine, banned = _types(node.get("type", list(_TYPES))), _types(sub["type"])
    if "number" in banned:
        banned.add("integer")
    if mine and mine <= banned:
        raise Unsatisfiable(f"`not` forbids type {sub['type']}, the only one(s) allowed")


def _types(t: Any) -> set[str]:
    return {t} if isinstance(t, str) else {x for x in t if isinstance(x, str)} \
        if isinstance(t, list) else set()


def _check_choices(node: dict[str, Any]) -> None:
    if "enum" in node and isinstance(node["enum"], list) and not node["enum"]:
        raise Unsatisfiable("enum is empty")
    if "const" in node and isinstance(node.get("enum"), list) and \
            not any(same(node["const"], e) for e in node["enum"]):
        raise Unsatisfiable(f"const {node['const']!r} is not in enum")


def _enum_value(node: dict[str, Any]) -> Any:
    types = node.get("type")
    for v in node["enum"]:
        if types is None or json_type(v) in ([types] if isinstance(types, str) else types) \
                or (json_type(v) == "integer" and "number" in types):
            return v
    raise Unsatisfiable(f"no enum value has type {types}")


def _type(node: dict[str, Any], path: tuple[str, ...], value: Any) -> str:
    t = node.get("type")
    if isinstance(t, list):
        if not t:
            raise Unsatisfiable("type is an empty list")
        if path or isinstance(value, dict):
            return "object" if "object" in t else t[0]
        if "const" in node or "enum" in node:
            return t[0]
        return next(x for x in _TYPES if x in t) if set(t) & set(_TYPES) else t[0]
    if isinstance(t, str):
        return t
    if path or isinstance(value, dict) or {"properties", "required"} & node.keys():
        return "object"
    if {"items", "prefixItems", "minItems", "contains"} & node.keys():
        return "array"
    if {"pattern", "minLength", "maxLength"} & node.keys():
        return "string"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} & node.keys():
        return "number"
    return "null"


def _bounds(node: dict[str, Any], low: str, high: str) -> tuple[int, int | None]:
    lo, hi = node.get(low, 0), node.get(high)
    if not is_num(lo) or (hi is not None and not is_num(hi)):
        raise Unbuildable(f"{low}/{high} is not a number")
    if hi is not None and lo > hi:
        raise Unsatisfiable(f"{low} {lo} > {high} {hi}")
    if lo > SIZE:
        raise Unbuildable(f"{low} {lo} is too large to build")
    return math.ceil(lo), hi


def _string(node: dict[str, Any]) -> str:
    lo, hi = _bounds(node, "minLength", "maxLength")
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        for s in examples(pattern) + examples(f".*(?:{pattern}).*"):
            if lo <= len(s) and (hi is None or len(s) <= hi) and search(pattern, s):
                return s
        raise Unbuildable(f"no string built for pattern {clip(pattern)}")
    return "a" * lo


def _array(node: dict[str, Any], ctx: _Ctx, depth: int) -> list[Any]:
    lo, hi = _bounds(node, "minItems", "maxItems")
    prefix = node.get("prefixItems", [])
    out: list[Any] = []
    if "contains" in node and node.get("minContains", 1) > 0:
        out.append(_build(node["contains"], ctx, (), _NO, depth + 1))
    items = node.get("items", True)
    while len(out) < lo:
        sub = prefix[len(out)] if len(out) < len(prefix) else items
        try:
            out.append(_build(sub, ctx, (), _NO, depth + 1))
        except Unsatisfiable as e:
            raise Unsatisfiable(f"minItems {lo}, but item {len(out)}: {e}") from None
    return out


def _object(node: dict[str, Any], ctx: _Ctx, path: tuple[str, ...], value: Any,
            depth: int) -> dict[str, Any]:
    lo, hi = _bounds(node, "minProperties", "maxProperties")
    required = [r for r in node.get("required", []) if isinstance(r, str)]
    props = node.get("properties", {}) if isinstance(node.get("properties"), dict) else {}
    if hi is not None and len(set(required)) > hi:
        raise Unsatisfiable(f"{len(set(required))} required properties > maxProperties {hi}")
    have: dict[str, Any] = dict(value) if isinstance(value, dict) and not path else {}
    if path:
        sub = property_schema(node, path[0])
        try:
            have[path[0]] = _build(sub, ctx, path[1:], value, depth + 1)
        except Unsatisfiable as e:
            raise Unsatisfiable(f"property {path[0]!r} is forbidden{_forbidden_by(node, path[0])}"
                                if sub is False else f"property {path[0]!r}: {e}") from None
    for name in required:
        if name in have:
            continue
        sub = property_schema(node, name)
        if sub is False:
            raise Unsatisfiable(f"required property {name!r} is forbidden"
                                f"{_forbidden_by(node, name)}")
        try:
            have[name] = _build(sub, ctx, (), _NO, depth + 1)
        except Unsatisfiable as e:
            raise Unsatisfiable(f"required property {name!r}: {e}") from None
    for name in props:  # minProperties: optional ones, in order, while they build
        if len(have) >= lo:
            break
        if name not in have:
            try:
                have[name] = _build(props[name], ctx, (), _NO, depth + 1)
            except Unbuildable:
                continue
    order = [*props, *have]
    return {k: have[k] for k in dict.fromkeys(order) if k in have}


def _forbidden_by(node: dict[str, Any], name: str) -> str:
    if node.get("properties", {}).get(name) is False:
        return " (its schema is `false`)"
    return " by additionalProperties: false"
