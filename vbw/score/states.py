"""Per-item, per-arm states: validity (valid / invalid / n/a) and correctness (right /
wrong), computed from the replay texts and the task alone.

Validity is jsonschema's verdict, with integers as JSON Schema defines them: a literal too
long for Python's int() (a JsonBigInt, see vbw.task.jsonvalues) is an `integer`, and
`multipleOf` is decided on it exactly. An object nested too deeply for the validator's
recursion (possible only with a recursive schema) counts as invalid.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal, localcontext
from functools import lru_cache
from typing import Any

import numpy as np
from jsonschema import ValidationError
from jsonschema.validators import extend, validator_for
from pydantic import BaseModel, ConfigDict

from vbw.errors import ReplayError
from vbw.replay.format import Replay
from vbw.task.arms import Arm
from vbw.task.jsonvalues import JsonBigInt
from vbw.task.runner import Item, Task
from vbw.task.schemas import schema_key


class ItemStates(BaseModel):
    """Arrays aligned on (item, arm): valid is 1/0, or -1 where the arm has no contract."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    ids: list[str]
    arms: list[Arm]  # typed; a key string appears only in report.json and the ledger
    valid: Any  # np.ndarray[int8] shape (n_items, n_arms)
    right: Any  # np.ndarray[bool] shape (n_items, n_arms)
    excluded: list[str]
    excluded_reasons: dict[str, str]

    def state(self, i: int, j: int) -> str:
        v = int(self.valid[i, j])
        return f"{'n/a' if v < 0 else ('valid' if v else 'invalid')}/" \
               f"{'right' if self.right[i, j] else 'wrong'}"


class _Validators:
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


def score_items(task: Task, items: list[Item], replay: Replay, arms: list[Arm]) -> ItemStates:
    """States for every item of `items` that the replay holds, in item order."""
    by_id = {r.id: r for r in replay.records}
    known = {it.id for it in items}
    stray = [r.id for r in replay.records if r.id not in known]
    if stray and len(stray) == len(replay.records):
        raise ReplayError(f"{replay.path}: no item id belongs to task {task.name} "
                          f"(first: {stray[0]!r})")
    validators = _Validators()
    ids: list[str] = []
    excluded: list[str] = []
    reasons: dict[str, str] = {}
    valid_rows: list[list[int]] = []
    right_rows: list[list[bool]] = []
    for item in items:
        rec = by_id.get(item.id)
        if rec is None:
            continue
        if rec.unsupported:
            excluded.append(item.id)
            reasons[item.id] = rec.unsupported
            continue
        vrow: list[int] = []
        rrow: list[bool] = []
        for arm in arms:
            a = rec.arms.get(arm.key)
            if a is None:
                raise ReplayError(f"{replay.path}: item {item.id} has no arm {arm.key!r} "
                                  f"(it has: {', '.join(rec.arms)})")
            obj, answer = task.answer(a.text, item, arm)
            if arm.has_contract:
                vrow.append(int(obj is not None and
                                validators.is_valid(item.schemas[arm.schema], obj)))
            else:
                vrow.append(-1)
            rrow.append(task.is_correct(answer, item))
        ids.append(item.id)
        valid_rows.append(vrow)
        right_rows.append(rrow)
    shape = (len(ids), len(arms))
    valid = np.array(valid_rows, dtype=np.int8).reshape(shape)
    right = np.array(right_rows, dtype=bool).reshape(shape)
    return ItemStates(ids=ids, arms=list(arms), valid=valid, right=right,
                      excluded=excluded, excluded_reasons=reasons)
