"""Schema validity as vbw scores it, for every layer that needs the verdict.

Validity is jsonschema's verdict, with integers as JSON Schema defines them: a literal too
long for Python's int() (a JsonBigInt, see vbw.task.jsonvalues) is an `integer`, and
`multipleOf` is decided on it exactly. An object nested too deeply for the validator's
recursion (possible only with a recursive schema) counts as invalid. Scoring and
mode=check (vbw.task.audit) share this one definition, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal, localcontext
from functools import lru_cache
from typing import Any

from jsonschema import ValidationError
from jsonschema.validators import extend, validator_for

from vbw.task.jsonvalues import JsonBigInt
from vbw.task.schemas import schema_key


class Validators:
    """jsonschema validators compiled once per distinct schema. A schema object is looked up
    by its id (an item's schema is one object shared by its arms, a static schema one object
    for all items), so no check serialises it; the first time an object is seen, its key
    (which keeps property order) finds a validator already compiled for an equal schema.
    Each schema object is kept referenced, so its id cannot be reused by another."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[dict[str, Any], Any]] = {}
        self._by_key: dict[str, Any] = {}

    def is_valid(self, schema: dict[str, Any], obj: Any) -> bool:
        hit = self._by_id.get(id(schema))
        if hit is None:
            key = schema_key(schema)
            validator = self._by_key.get(key)
            if validator is None:
                cls = validator_for(schema)
                validator = self._by_key[key] = _json_integers(cls)(schema)
            hit = self._by_id[id(schema)] = (schema, validator)
        try:
            return bool(hit[1].is_valid(obj))
        except RecursionError:
            return False


@lru_cache(maxsize=None)
def _json_integers(cls: Any) -> Any:
    """`cls` where a JsonBigInt is an `integer` and `multipleOf` is exact on it."""
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
    return extend(cls, validators=validators,
                  type_checker=base_types.redefine("integer", is_integer))
