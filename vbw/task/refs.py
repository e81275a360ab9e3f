"""`$ref` stays inside the schema: vbw never fetches a schema from a URL or a file.

How it works and why: docs/design.md, section vbw.task.refs.
"""

from __future__ import annotations

from typing import Any

from referencing import Registry, Resource
from referencing.exceptions import Unresolvable, Unretrievable
from referencing.jsonschema import DRAFT202012, specification_with

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


class ExternalRef(LookupError):
    """A reference that would need something outside the schema."""


def _refuse(uri: str) -> Resource[Any]:
    raise ExternalRef(f"{uri!r} is outside the schema")


NO_FETCH: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]
"""The registry every validator is built on: resolution inside the schema only."""


def _has_ref(schema: Any) -> bool:
    """Any reference keyword anywhere (a cheap scan, so schemas without one cost nothing
    more; a false positive, e.g. a property named `$ref`, only costs the exact walk)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(k in node for k in REF_KEYWORDS):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def ref_problem(schema: Any, meta_schema: dict[str, Any] | None = None) -> str | None:
    """Why a reference in `schema` does not resolve inside it, or loops in place (see
    `_loop`), or None. `meta_schema` (the validator class's) picks the draft's rules for
    `$id` and subschemas."""
    if not isinstance(schema, dict) or not _has_ref(schema):
        return None
    dialect = (meta_schema or {}).get("$schema") or (meta_schema or {}).get("id") or ""
    spec = specification_with(dialect, default=DRAFT202012)
    root = spec.create_resource(schema)
    stack = [(root, NO_FETCH.resolver_with_root(root))]
    resolvers: dict[int, Any] = {}  # id of each schema object -> its resolver
    nodes: list[dict[str, Any]] = []
    while stack:
        resource, resolver = stack.pop()
        node = resource.contents
        if isinstance(node, dict):
            resolvers[id(node)] = resolver
            nodes.append(node)
            for keyword in REF_KEYWORDS:
                ref = node.get(keyword)
                if not isinstance(ref, str):
                    continue
                try:
                    resolver.lookup(ref)
                except (Unresolvable, ExternalRef) as e:
                    return _why(keyword, ref, e)
        for sub in resource.subresources():
            stack.append((sub, resolver.in_subresource(sub)))
    return _loop(nodes, resolvers)


# keywords whose subschemas apply to the value itself (not to a part of it)
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")


def _in_place(node: dict[str, Any], resolvers: dict[int, Any]) -> list[tuple[Any, str]]:
    """The subschemas applied to the same value as `node`, each with the keyword (and for
    a reference, the reference) that applies it."""
    out: list[tuple[Any, str]] = []
    for keyword in REF_KEYWORDS:
        ref = node.get(keyword)
        if isinstance(ref, str) and id(node) in resolvers:
            try:
                resolved = resolvers[id(node)].lookup(ref)
            except (Unresolvable, ExternalRef):  # a pointer into data: checked elsewhere
                continue
            resolvers.setdefault(id(resolved.contents), resolved.resolver)
            shown = ref if len(ref) <= 80 else f"{ref[:77]}..."
            out.append((resolved.contents, f"{keyword} {shown!r}"))
    for keyword in _IN_PLACE_ONE:
        if keyword in node:
            out.append((node[keyword], keyword))
    for keyword in _IN_PLACE_MANY:
        if isinstance(node.get(keyword), list):
            out.extend((sub, keyword) for sub in node[keyword])
    if isinstance(node.get("dependentSchemas"), dict):
        out.extend((sub, "dependentSchemas") for sub in node["dependentSchemas"].values())
    return out


def _loop(nodes: list[dict[str, Any]], resolvers: dict[int, Any]) -> str | None:
    """A reference that leads back to where it started without descending into the value
    (`{"$ref": "#"}`, `$defs: {a: {$ref: "#/$defs/a"}}`, two definitions whose allOf
    name each other): validating a value there never ends (JSON Schema leaves such a
    schema undefined). Depth-first over the in-place edges from every schema object,
    iteratively; each object is left once."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for start in nodes:
        if id(start) in state:
            continue
        path: list[tuple[Any, str]] = [(start, "")]
        edges = [iter(_in_place(start, resolvers))]
        state[id(start)] = 1
        while edges:
            step = next(edges[-1], None)
            if step is None:
                state[id(path.pop()[0])] = 2
                edges.pop()
                continue
            sub, how = step
            if not isinstance(sub, dict) or state.get(id(sub)) == 2:
                continue
            if state.get(id(sub)) == 1:
                cycle = [h for _, h in path[[id(n) for n, _ in path].index(id(sub)) + 1:]]
                ref = next((h for h in [*cycle, how] if h.startswith("$")), how)
                return (f"{ref} loops back to where it started without descending into "
                        "the value: validating any value would never end (recurse "
                        "through properties or items instead)")
            state[id(sub)] = 1
            path.append((sub, how))
            edges.append(iter(_in_place(sub, resolvers)))
    return None


def _why(keyword: str, ref: str, e: Exception) -> str:
    outside = isinstance(e, ExternalRef) or isinstance(e.__cause__, Unretrievable)
    return (f"{keyword} {ref!r} " + (
        "points outside the schema (vbw resolves references only inside the schema: "
        "$defs, anchors, embedded $id; it never fetches a URL or a file)" if outside
        else "does not resolve inside the schema"))
