"""Schema validity as vbw scores it, for every layer that needs the verdict.

How it works and why: docs/design.md, section vbw.task.validity.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal, localcontext
from functools import lru_cache
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.validators import extend, validator_for

from vbw.task.jsontext.values import JsonBigInt
from vbw.task.refs import NO_FETCH
from vbw.task.schema.patterns import KEYWORDS as REGEX_KEYWORDS
from vbw.task.schema.sources import schema_key


KEPT = 4096  # schema objects and compiled validators kept at most


class Validators:
    """Validators compiled once per distinct schema. A schema object is looked up by its
    id (an item's schema is one object shared by its arms, a static schema one object for
    all items), so no check serialises it; the first time an object is seen, its key
    (which keeps property order) finds a validator already compiled for an equal schema.
    Each schema object is kept referenced, so its id cannot be reused by another, up to
    KEPT of them: a replay of many items with per-item schemas keeps a bounded number."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[dict[str, Any], Any, Any]] = {}
        self._by_key: dict[str, tuple[Any, Any]] = {}

    def is_valid(self, schema: dict[str, Any], obj: Any, is_plain: bool | None = None) -> bool:
        """Whether `obj` is valid under `schema`; `is_plain`: plain(obj), if known."""
        hit = self._by_id.get(id(schema))
        if hit is None:
            if len(self._by_id) >= KEPT:  # per-item schemas of a long replay: start over
                self._by_id.clear()
            if len(self._by_key) >= KEPT:
                self._by_key.clear()
            key = schema_key(schema)
            pair = self._by_key.get(key)
            if pair is None:
                cls = validator_for(schema)
                pair = self._by_key[key] = (_json_integers(cls)(schema, registry=NO_FETCH),
                                            _fast(schema, cls))
            hit = self._by_id[id(schema)] = (schema, *pair)
        if hit[2] is not None and (plain(obj) if is_plain is None else is_plain):
            try:
                return bool(hit[2].is_valid(obj))
            except ValueError:  # a value it cannot take in after all: jsonschema decides
                pass
        try:
            return bool(hit[1].is_valid(obj))
        except RecursionError:
            return False


# Keywords whose subschemas are a schema, a list of schemas, or a map of schemas.
_ONE = frozenset({"additionalProperties", "items", "not", "contains", "propertyNames"})
_MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_MAP = frozenset({"properties"})
# Keywords that only hold values (annotations, or constraints on numbers, lengths, sizes,
# equality to JSON values).
_VALUES = frozenset({"type", "enum", "const", "required", "minimum", "maximum",
                     "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                     "minItems", "maxItems", "minProperties", "maxProperties", "title",
                     "description", "default", "examples", "$comment", "$schema"})
RS_KEYWORDS = _ONE | _MANY | _MAP | _VALUES


def _fast(schema: Any, cls: Any) -> Any:
    """A jsonschema-rs validator where it agrees with jsonschema (module docstring), else
    None; also None for a schema jsonschema-rs cannot compile."""
    if cls is not Draft202012Validator or not _rs_keywords_only(schema):
        return None
    try:
        # no $ref reaches it (RS_KEYWORDS); a retriever that refuses all the same
        return jsonschema_rs.Draft202012Validator(schema, retriever=_no_fetch)
    except Exception:  # noqa: BLE001 - any refusal means: jsonschema decides
        return None


def _no_fetch(uri: str) -> Any:
    raise ValueError(f"{uri!r} is outside the schema (vbw never fetches a schema)")


def _rs_keywords_only(schema: Any) -> bool:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict) or not node.keys() <= RS_KEYWORDS:
            return False
        for k, v in node.items():
            if k in _ONE:
                stack.append(v)
            elif k in _MANY:
                if not isinstance(v, list):
                    return False
                stack.extend(v)
            elif k in _MAP:
                if not isinstance(v, dict):
                    return False
                stack.extend(v.values())
    return True


_I64 = (-(2 ** 63), 2 ** 63 - 1)


def plain(value: Any) -> bool:
    """JSON values that both validators see alike: dicts with str keys, lists, str,
    bool, None, 64-bit ints, finite floats."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if not _I64[0] <= v <= _I64[1]:
                return False
        elif t is float:
            if not math.isfinite(v):
                return False
        elif t is dict:
            if not all(type(k) is str for k in v):
                return False
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        else:
            return False
    return True


@lru_cache(maxsize=None)
def _json_integers(cls: Any) -> Any:
    """`cls` where a JsonBigInt is an `integer`, `multipleOf` is exact on it, and the
    regex keywords run on RE2."""
    base_types, base_multiple = cls.TYPE_CHECKER, cls.VALIDATORS.get("multipleOf")

    def is_integer(checker: Any, instance: Any) -> bool:
        return isinstance(instance, JsonBigInt) or base_types.is_type(instance, "integer")

    def multiple_of(validator: Any, d: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not isinstance(instance, JsonBigInt) or isinstance(d, bool) or \
                not isinstance(d, (int, float)) or d <= 0:
            yield from base_multiple(validator, d, instance, schema)
            return
        with localcontext() as ctx:  # enough digits for the exact remainder
            ctx.prec = len(instance.as_tuple().digits) + 1200
            remainder = instance % Decimal(d)
        if remainder != 0:
            yield ValidationError(f"{instance} is not a multiple of {d}")

    validators = {"multipleOf": multiple_of} if base_multiple is not None else {}
    validators.update({k: v for k, v in REGEX_KEYWORDS.items() if k in cls.VALIDATORS})
    return extend(cls, validators=validators,
                  type_checker=base_types.redefine("integer", is_integer))
