"""BFCL's own AST rules for one Python function call (`call_args` with `rules: bfcl_official`).

How it works and why: docs/design.md, section vbw.task.bfcl_rules.
"""

from __future__ import annotations

from typing import Any

MAX_CALLS = 64  # calls per item matched under BFCL's parallel rules; more: wrong
_STRIPPED = {ord(c): None for c in " ,./-_*^"}  # l. 181
_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float,
                           "boolean": bool, "array": list, "object": dict}
REASONS = ("not_arguments", "missing_required", "unexpected_param", "unknown_type",
           "type", "nested_type", "string_value", "list_value", "dict_value",
           "other_value", "missing_optional", "wrong_function", "wrong_count", "no_match",
           "too_many_calls")


def standardize(s: str) -> str:
    """l. 174-182: the stripped characters deleted, then lower case, then ' made "."""
    return s.translate(_STRIPPED).lower().replace("'", '"')


def _std(v: Any) -> Any:
    return standardize(v) if type(v) is str else v


def _python_type(prop: Any) -> type | None:
    t = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(t, list):
        return str  # BFCL `any`
    return _TYPES.get(t) if isinstance(t, str) else None


def _first_type(allowed: list[Any]) -> type | None:
    """The type of the first allowed value that is not the optional marker (l. 76-80)."""
    return next((type(a) for a in allowed if a != ""), None)


def _as_list(allowed: Any) -> list[Any]:
    return allowed if isinstance(allowed, list) else [allowed]


def _item_type_ok(item: Any, entry: list[Any], want: type) -> bool:
    """One list item against one allowed list (l. 133-141): its declared type, or the
    type of that list's first value."""
    return type(item) is want or type(item) is _first_type(entry)


def _type_check(value: Any, allowed: list[Any], want: type,
                inner: type | None) -> tuple[str | None, bool]:
    """(reason or None, is_variable), after l. 93-171."""
    seen = _first_type(allowed)
    if type(value) is want:
        variable = seen is not None and seen is not want
        if inner is None:
            return None, variable
        for entry in allowed:
            if type(entry) is not list or all(_item_type_ok(v, entry, inner) for v in value):
                return None, variable
        return ("nested_type" if type(value) is seen else "type"), variable
    if seen is not None and type(value) is seen:
        return None, True
    return "type", False


def _dict_matches(value: Any, entry: Any) -> bool:
    """One allowed dict (l. 250-295): no key outside it, each value among its allowed
    ones (strings normalised), each of its keys present unless "" is allowed."""
    if not isinstance(value, dict) or not isinstance(entry, dict):
        return False
    for key, v in value.items():
        if key not in entry or _std(v) not in [_std(a) for a in _as_list(entry[key])]:
            return False
    return all(k in value or "" in _as_list(vals) for k, vals in entry.items())


def _list_matches(value: list[Any], allowed: list[Any]) -> bool:
    """l. 204-235: the list, its strings normalised, equals one allowed list (order kept)."""
    mine = [_std(v) for v in value]
    for entry in allowed:
        if isinstance(entry, (list, str)) and mine == [_std(a) for a in entry]:
            return True
    return False


def _list_of_dicts_matches(value: list[Any], allowed: list[Any]) -> bool:
    """l. 301-330: as many dicts as one allowed list, each matching its counterpart."""
    for entry in allowed:
        if isinstance(entry, (list, str)) and len(entry) == len(value) and all(
                _dict_matches(v, e) for v, e in zip(value, entry)):
            return True
    return False


def _value_reason(value: Any, allowed: list[Any], want: type, inner: type | None) -> str | None:
    if want is dict:
        return None if any(_dict_matches(value, e) for e in allowed if e != "") else "dict_value"
    if want is list and inner is dict:
        return None if _list_of_dicts_matches(value, allowed) else "dict_value"
    if want is str:
        return None if standardize(value) in [standardize(a) for a in allowed
                                              if type(a) is str] else "string_value"
    if want is list:
        return None if _list_matches(value, allowed) else "list_value"
    return None if value in allowed else "other_value"


def official_reason(answer: Any, gold: Any, schema: Any) -> str | None:
    """None when BFCL's checker calls the arguments right, else the first reason it fails
    (one of REASONS), checking in BFCL's order: required, then each given parameter."""
    if not isinstance(answer, dict) or not isinstance(gold, dict):
        return "not_arguments"
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties", {})
    if any(p not in answer for p in schema.get("required", [])):  # l. 367-372
        return "missing_required"
    for param, value in answer.items():
        if param not in props or param not in gold:  # l. 376-380
            return "unexpected_param"
        reason = param_reason(value, _as_list(gold[param]), props[param])
        if reason is not None:
            return reason
    if any(p not in answer and "" not in _as_list(a) for p, a in gold.items()):  # l. 506
        return "missing_optional"
    return None


PARAMETER_TYPES = ("string", "integer", "number", "boolean", "array", "object", "other")


def param_group(prop: Any) -> str:
    """A parameter's group for per-field scoring: its declared JSON type, `other` when it
    declares none or several."""
    t = prop.get("type") if isinstance(prop, dict) else None
    return t if isinstance(t, str) and t in PARAMETER_TYPES else "other"


def param_reason(value: Any, allowed: list[Any], prop: Any) -> str | None:
    """None when BFCL's checker calls one given parameter's value right (its declaration
    `prop`, its allowed values), else the reason (l. 382-500)."""
    want = _python_type(prop)
    inner = None
    if want is list:
        inner = _python_type(prop.get("items"))
        if inner is None:
            return "unknown_type"
    if want is None:
        return "unknown_type"
    if want is float and type(value) is int:  # l. 443-448
        try:
            value = float(value)
        except OverflowError:  # BFCL raises; too large for a float is wrong here
            return "type"
    reason, variable = _type_check(value, allowed, want, inner)
    if reason is None:
        reason = (None if value in allowed else "other_value") if variable \
            else _value_reason(value, allowed, want, inner)
    return reason


def _function_schemas(schema: Any) -> dict[str, Any]:
    """Function name -> arguments schema, from the schema of a list of calls (or of an
    object holding that list in one of its properties, vbw.task.schema.sources.CallsSchema): its
    `items` (or each `anyOf`/`oneOf` branch of them) declares a call as an object whose one
    property is the function's name."""
    if isinstance(schema, dict) and "items" not in schema:
        props = schema.get("properties")
        arrays = [p for p in props.values() if isinstance(p, dict) and "items" in p] \
            if isinstance(props, dict) else []
        schema = arrays[0] if len(arrays) == 1 else None
    items = schema.get("items") if isinstance(schema, dict) else None
    if not isinstance(items, dict):
        return {}
    branches = [items, *items.get("anyOf", []), *items.get("oneOf", [])]
    out: dict[str, Any] = {}
    for branch in branches:
        if isinstance(branch, dict) and isinstance(branch.get("properties"), dict):
            out.update(branch["properties"])
    return out


def _call_reason(call: Any, expected: dict[str, Any], functions: dict[str, Any]) -> str | None:
    """One call {name: arguments} against one expected call {name: allowed}, whose first
    key BFCL reads (l. 340, 574) and which must be a key of the call (l. 356-362)."""
    name, allowed = next(iter(expected.items()))
    if not isinstance(call, dict) or name not in call:
        return "wrong_function"
    if name not in functions:
        return "unknown_type"  # BFCL has no description for it and raises
    return official_reason(call[name], allowed, functions[name])


def calls_reason(answer: Any, gold: Any, schema: Any) -> str | None:
    """Several calls, BFCL's `parallel` categories (l. 554-620; `multiple` is the case of
    one call, l. 623-646): the answer a list of {name: arguments}, the gold BFCL's list of
    {name: allowed}, as many calls as expected, and each expected call, in the gold's order,
    takes the first call not yet taken that matches it. Quirk (l. 579-593): that greedy
    choice is final, so a call matching two expected calls can leave the other unmatched
    where a different pairing would match all."""
    if not isinstance(answer, list) or not isinstance(gold, list):
        return "not_arguments"
    if len(answer) != len(gold):
        return "wrong_count"
    if len(gold) > MAX_CALLS:
        return "too_many_calls"
    functions = _function_schemas(schema)
    taken: set[int] = set()
    for expected in gold:
        if not isinstance(expected, dict) or not expected:
            return "not_arguments"
        match = next((i for i, call in enumerate(answer)
                      if i not in taken and _call_reason(call, expected, functions) is None),
                     None)
        if match is None:
            return "no_match"
        taken.add(match)
    return None
