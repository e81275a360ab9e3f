"""Invalid instances near a valid one: each breaks one keyword of the schema at one place
(type, enum, const, required, additionalProperties, bounds, lengths, pattern, items), and
is kept only if the validator scoring uses calls it invalid. mode=conformance walks each
engine's mask over them: an engine that accepts one is unsound for that keyword.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from vbw.task.schema.walk import json_type

MOST = 48  # mutations kept per instance
DEPTH = 16  # schema levels followed
_WRONG_TYPES: list[tuple[str, Any]] = [("string", "x"), ("integer", 7), ("number", 0.5),
                                       ("boolean", True), ("null", None), ("array", []),
                                       ("object", {})]


class Mutation(NamedTuple):
    """One broken keyword: which, where (a JSON pointer into the instance), the instance."""

    keyword: str
    where: str
    value: Any


def _resolve(node: Any, root: Any) -> Any:
    """A local `$ref` (`#/$defs/...`, `#/definitions/...`) followed once; else `node`."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            return node
        target = target[part]
    return target if isinstance(target, dict) else node


def _allowed(node: dict[str, Any]) -> set[str] | None:
    t = node.get("type")
    if isinstance(t, str):
        t = [t]
    if not isinstance(t, list):
        return None
    allowed = set(t)
    if "number" in allowed:
        allowed.add("integer")
    return allowed


def _edits(node: dict[str, Any], value: Any) -> Iterator[tuple[str, Any]]:
    """(keyword, replacement) for the value at one node; `_DROP` markers for objects are
    handled by the caller."""
    allowed = _allowed(node)
    if allowed is not None:
        for name, wrong in _WRONG_TYPES:
            if name not in allowed and not (name == "integer" and "number" in allowed):
                yield "type", wrong
                break
    if isinstance(node.get("enum"), list):
        yield "enum", (f"{value}_not_in_enum" if isinstance(value, str) else "not_in_enum")
    if "const" in node:
        yield "const", ("not_the_const" if node["const"] != "not_the_const" else 0)
    if type(value) in (int, float):
        step = 1 if type(value) is int else 0.5
        for key, sign in (("minimum", -1), ("exclusiveMinimum", 0), ("maximum", 1),
                          ("exclusiveMaximum", 0)):
            bound = node.get(key)
            if type(bound) in (int, float):
                moved = bound + sign * step if sign else bound
                yield key, int(moved) if type(value) is int and moved == int(moved) else moved
    if isinstance(value, str):
        if type(node.get("minLength")) is int and node["minLength"] > 0:
            yield "minLength", value[: node["minLength"] - 1]
        if type(node.get("maxLength")) is int and node["maxLength"] < 4096:
            yield "maxLength", value + "x" * (node["maxLength"] + 1 - len(value))
        if isinstance(node.get("pattern"), str):
            yield "pattern", ""
            yield "pattern", "\u00a7!"
    if isinstance(value, list):
        if type(node.get("minItems")) is int and node["minItems"] > 0:
            yield "minItems", value[: node["minItems"] - 1]
        if type(node.get("maxItems")) is int and node["maxItems"] < 1024 and value:
            yield "maxItems", value + [value[0]] * (node["maxItems"] + 1 - len(value))


def _sites(node: Any, value: Any, root: Any, where: str, depth: int
           ) -> Iterator[tuple[str, str, Callable[[Any], Any]]]:
    """(keyword, where, edit) for every place and keyword: `edit` maps the instance's
    value at `where` to its broken replacement."""
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth > DEPTH:
        return
    for keyword, wrong in _edits(node, value):
        yield keyword, where, lambda _v, wrong=wrong: wrong
    if isinstance(value, dict):
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        for name in node.get("required", []) if isinstance(node.get("required"), list) else []:
            if name in value:
                yield "required", where, lambda v, name=name: {k: x for k, x in v.items()
                                                               if k != name}
        if node.get("additionalProperties") is False:
            yield ("additionalProperties", where,
                   lambda v: {**v, "vbw_extra": 1} if "vbw_extra" not in props else v)
        for name, sub in props.items():
            if name in value:
                for keyword, inner, edit in _sites(sub, value[name], root,
                                                   f"{where}/{name}", depth + 1):
                    yield keyword, inner, edit
    if isinstance(value, list) and value and isinstance(node.get("items"), dict):
        for keyword, inner, edit in _sites(node["items"], value[0], root, f"{where}/0",
                                           depth + 1):
            yield keyword, inner, edit


def _apply(value: Any, where: str, edit: Callable[[Any], Any]) -> Any:
    out = copy.deepcopy(value)
    parts = [p for p in where.split("/")[1:]]
    if not parts:
        return edit(out)
    parent = out
    for p in parts[:-1]:
        parent = parent[int(p)] if isinstance(parent, list) else parent[p]
    last = parts[-1]
    key: Any = int(last) if isinstance(parent, list) else last
    parent[key] = edit(parent[key])
    return out


def mutations(schema: Any, value: Any, is_valid: Callable[[Any], bool]) -> list[Mutation]:
    """The invalid instances one keyword away from `value` (valid under `schema`), at most
    MOST, each checked invalid by `is_valid` (scoring's verdict).

    Args:
        schema: the JSON Schema.
        value: a valid instance of it.
        is_valid: validity under `schema` as scoring decides it.
    Returns:
        One Mutation per broken keyword and place, in schema order.
    """
    out: list[Mutation] = []
    seen: set[str] = set()
    for keyword, where, edit in _sites(schema, value, schema, "", 0):
        try:
            broken = _apply(value, where, edit)
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        mark = f"{keyword} {where} {json_type(broken)} {broken!r:.200}"
        if mark in seen or is_valid(broken):
            continue
        seen.add(mark)
        out.append(Mutation(keyword, where or "/", broken))
        if len(out) >= MOST:
            break
    return out
