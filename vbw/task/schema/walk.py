"""Reading a JSON Schema the way vbw.task.instance builds from it: a local $ref followed,
allOf folded into one node, the schema of a named property, a number's bounds.

Kept apart from the builder so each stays small; both raise the builder's two failures
(`Unsatisfiable`: no instance exists; `Unbuildable`: not covered here, so nothing is
concluded).
"""

from __future__ import annotations

import math
from typing import Any

from vbw.task.regex import compile_schema_regex

DEPTH = 32  # nesting followed at most (a recursive schema's minimal instance is shallow)
WORK = 200_000  # schema keys, enum values and allOf parts handled at most per build


class Unbuildable(Exception):
    """No instance was built: the generator does not cover something (see the docstring)."""


class Unsatisfiable(Unbuildable):
    """No instance exists; the message says why."""


class TooMuchWork(Unbuildable):
    """A build ran out of its Budget."""


class Budget:
    """The work one build may still do (WORK units: a key merged, an enum value compared,
    a $ref followed), so a hostile schema (two 40,000-value enums, $refs doubling at each
    level) costs a bounded time; past it the build is Unbuildable (nothing concluded)."""

    def __init__(self, units: int = WORK) -> None:
        self.left = units

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise TooMuchWork(f"the schema is too large to build (over {WORK:,} units of "
                              "work: keys merged, enum values compared, $refs followed)")


def property_schema(node: Any, name: str) -> Any:
    """The schema of property `name` of object schema `node`."""
    if not isinstance(node, dict):
        return node
    props = node.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict):
        for rx, sub in patterns.items():
            if search(rx, name):
                return sub
    return node.get("additionalProperties", True)


def resolve(node: Any, root: Any, depth: int, budget: Budget | None = None) -> Any:
    """`node` with a local `$ref` ("#/..." JSON pointer) followed; others are Unbuildable."""
    budget = budget or Budget()
    while isinstance(node, dict) and "$ref" in node:
        budget.spend(1 + len(node))
        if depth > DEPTH:
            raise Unbuildable("$ref chain too long")
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unbuildable(f"$ref {ref!r} is not local")
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            else:
                raise Unbuildable(f"$ref {ref!r} does not resolve")
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {"allOf": [target, rest]} if rest else target
        depth += 1
    return node


def merged(node: Any, root: Any, depth: int, budget: Budget | None = None) -> Any:
    """`node` with its $ref followed and its allOf folded in (required and properties
    united, bounds narrowed, other keywords: the later one wins)."""
    if depth > DEPTH:
        raise Unbuildable("allOf nested too deeply")
    budget = budget or Budget()
    node = resolve(node, root, depth, budget)
    if not isinstance(node, dict) or "allOf" not in node:
        return node
    out = {k: v for k, v in node.items() if k != "allOf"}
    for part in node["allOf"] if isinstance(node["allOf"], list) else []:
        part = merged(part, root, depth + 1, budget)
        if part is False:
            raise Unsatisfiable("allOf holds `false`")
        if part is True or not isinstance(part, dict):
            continue
        budget.spend(1 + len(part))
        for k, v in part.items():
            out[k] = _combine(k, out[k], v, budget) if k in out else v
    return out


def _combine(key: str, a: Any, b: Any, budget: Budget) -> Any:
    if isinstance(a, (list, dict)) and isinstance(b, (list, dict)):
        budget.spend(len(a) + len(b))
    if key == "required" and isinstance(a, list) and isinstance(b, list):
        return list(dict.fromkeys([*a, *b]))
    if key == "properties" and isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: ({"allOf": [a[k], v]} if k in a else v) for k, v in b.items()}}
    if key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties") \
            and is_num(a) and is_num(b):
        return max(a, b)
    if key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties") \
            and is_num(a) and is_num(b):
        return min(a, b)
    if key == "enum" and isinstance(a, list) and isinstance(b, list):
        kept = {y if type(y) in _PLAIN else canonical(y, budget) for y in b}
        return [x for x in a if (x if type(x) in _PLAIN else canonical(x, budget)) in kept]
    if key == "type":
        ta, tb = ([a] if isinstance(a, str) else a), ([b] if isinstance(b, str) else b)
        both = [t for t in ta if t in tb or (t == "integer" and "number" in tb)]
        both += [t for t in tb if t == "integer" and "number" in ta and t not in both]
        return both
    if key in ("anyOf", "oneOf", "pattern"):
        raise Unbuildable(f"two {key} to combine")
    return b


def number_bounds(node: dict[str, Any]) -> tuple[float | None, bool, float | None, bool]:
    """(lowest, is it exclusive, highest, is it exclusive); a contradiction is refused."""
    lo = hi = None
    lo_open = hi_open = False
    for key, is_open in (("minimum", False), ("exclusiveMinimum", True)):
        v = node.get(key)
        if is_num(v) and (lo is None or v > lo or (v == lo and is_open)):
            lo, lo_open = v, is_open
    for key, is_open in (("maximum", False), ("exclusiveMaximum", True)):
        v = node.get(key)
        if is_num(v) and (hi is None or v < hi or (v == hi and is_open)):
            hi, hi_open = v, is_open
    if lo is not None and hi is not None and (lo > hi or (lo == hi and (lo_open or hi_open))):
        raise Unsatisfiable(f"no number within the bounds {bounds_text(node)}")
    if not all(math.isfinite(v) for v in (lo, hi) if v is not None):
        raise Unbuildable("an infinite bound")
    return lo, lo_open, hi, hi_open


def bounds_text(node: dict[str, Any]) -> str:
    return ", ".join(f"{k} {node[k]}" for k in ("minimum", "exclusiveMinimum", "maximum",
                                                  "exclusiveMaximum") if k in node)


def json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(v), "?")


_PLAIN = frozenset({str, int, float, type(None)})  # their own hashable form (canonical)


def canonical(v: Any, budget: Budget, depth: int = 0) -> Any:
    """A hashable form of a JSON value, equal for values JSON Schema calls equal (`1` and
    `1.0` are one number; `true` is not `1`; key order does not count). A str, int,
    float or None is its own form (no tuple holds one bare, so none is mistaken)."""
    budget.spend(1)
    if depth > DEPTH:
        raise Unbuildable("an enum value nested too deeply to compare")
    if type(v) in _PLAIN:
        return v
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, list):
        return ("l", tuple(canonical(x, budget, depth + 1) for x in v))
    if isinstance(v, dict):
        return ("o", frozenset((k, canonical(x, budget, depth + 1)) for k, x in v.items()))
    return ("?", repr(v))


def same(a: Any, b: Any) -> bool:
    return json_type(a) == json_type(b) and a == b


def is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def search(pattern: str, s: str) -> bool:
    """A schema `pattern` on a candidate, on the same linear-time engine (RE2) as validity."""
    try:
        return compile_schema_regex(pattern).search(s) is not None
    except ValueError:
        return False

