"""`$ref` stays inside the schema: vbw never fetches a schema from a URL or a file.

A task file is untrusted input, and jsonschema's default (deprecated) `$ref` resolution
fetches any URL it is given, at scoring time, once per validation: a task could make vbw
request `http://...` or read `file:///etc/passwd`, and an unresolvable reference surfaced
as a traceback mid-run. So every reference is resolved here when the task loads, against
a registry that holds only the schema itself (its `$defs`, anchors and embedded `$id`
resources) and whose retrieve refuses; anything else is a one-line error then. Validators
are built on the same refusing registry (`NO_FETCH`), so nothing reaches the network even
if a schema got past the load check.
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
    """Why a reference in `schema` does not resolve inside it, or None. `meta_schema`
    (the validator class's) picks the draft's rules for `$id` and subschemas."""
    if not isinstance(schema, dict) or not _has_ref(schema):
        return None
    dialect = (meta_schema or {}).get("$schema") or (meta_schema or {}).get("id") or ""
    spec = specification_with(dialect, default=DRAFT202012)
    root = spec.create_resource(schema)
    stack = [(root, NO_FETCH.resolver_with_root(root))]
    while stack:
        resource, resolver = stack.pop()
        node = resource.contents
        if isinstance(node, dict):
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
    return None


def _why(keyword: str, ref: str, e: Exception) -> str:
    outside = isinstance(e, ExternalRef) or isinstance(e.__cause__, Unretrievable)
    return (f"{keyword} {ref!r} " + (
        "points outside the schema (vbw resolves references only inside the schema: "
        "$defs, anchors, embedded $id; it never fetches a URL or a file)" if outside
        else "does not resolve inside the schema"))
