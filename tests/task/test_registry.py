"""The vocabulary registry: one declaration per kind, a did-you-mean lookup, and the
discriminated union the task models validate with."""

from __future__ import annotations

import typing
from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from vbw.task.base import StrictModel
from vbw.task.registry import Registry


def _animals() -> tuple[Registry[StrictModel], type[StrictModel], type[StrictModel]]:
    reg: Registry[StrictModel] = Registry("animal")

    @reg.register
    class Cat(StrictModel):
        kind: Literal["cat"]
        lives: int = 9

    @reg.register
    class Dog(StrictModel):
        kind: Literal["dog"]

    return reg, Cat, Dog


def test_kinds_in_registration_order_and_lookup() -> None:
    reg, cat, dog = _animals()
    assert reg.kinds == ("cat", "dog")
    assert reg.get("dog") is dog and "cat" in reg and "cow" not in reg
    assert dict(reg.classes) == {"cat": cat, "dog": dog}


def test_duplicate_kind_is_rejected() -> None:
    reg, cat, _ = _animals()

    class OtherCat(StrictModel):
        kind: Literal["cat"]

    with pytest.raises(ValueError, match="animal kind 'cat' is claimed by both Cat and OtherCat"):
        reg.register(OtherCat)
    assert reg.get("cat") is cat


def test_unknown_kind_did_you_mean_and_valid_kinds() -> None:
    reg, _, _ = _animals()
    with pytest.raises(ValueError) as e:
        reg.get("dgo")
    assert str(e.value) == "unknown animal kind 'dgo'; did you mean 'dog'? valid: cat, dog"
    with pytest.raises(ValueError, match=r"^unknown animal kind 'zebra'; valid: cat, dog$"):
        reg.get("zebra")


def test_union_is_a_discriminated_union_of_the_classes() -> None:
    reg, cat, dog = _animals()
    union = reg.union()
    members = typing.get_args(typing.get_args(union)[0])
    assert members == (cat, dog)

    class Pet(BaseModel):
        animal: union  # type: ignore[valid-type]

    assert Pet.model_validate({"animal": {"kind": "cat"}}).animal == cat(kind="cat")
    with pytest.raises(ValidationError) as e:
        Pet.model_validate({"animal": {"kind": "cow"}})
    assert e.value.errors()[0]["type"] == "union_tag_invalid"
    schema = Pet.model_json_schema()
    assert schema["properties"]["animal"]["discriminator"]["propertyName"] == "kind"


def test_registering_after_the_union_is_built_fails() -> None:
    reg, _, _ = _animals()
    reg.union()

    class Cow(StrictModel):
        kind: Literal["cow"]

    with pytest.raises(TypeError, match="union is already built"):
        reg.register(Cow)


def test_a_class_needs_a_required_literal_kind() -> None:
    reg: Registry[StrictModel] = Registry("animal")

    class NoKind(StrictModel):
        name: str

    class FreeKind(StrictModel):
        kind: str

    class DefaultKind(StrictModel):
        kind: Literal["x"] = "x"

    for cls, problem in ((NoKind, "no 'kind' field"), (FreeKind, "must be a Literal"),
                         (DefaultKind, "must be required")):
        with pytest.raises(TypeError, match=problem):
            reg.register(cls)
    with pytest.raises(TypeError, match="no kinds"):
        reg.union()


def test_task_vocabularies_are_registries() -> None:
    from vbw.task import CHECKER_KINDS, COERCION_KINDS, SCHEMA_KINDS, STEP_KINDS
    from vbw.task.check import CHECKERS
    from vbw.task.extract import STEPS

    assert STEPS.kinds == ("regex", "boxed", "last_number", "python_call", "python_calls")
    assert tuple(STEP_KINDS) == STEPS.kinds
    assert tuple(CHECKER_KINDS) == CHECKERS.kinds
    assert tuple(COERCION_KINDS) == ("identity", "number", "string", "boolean")
    assert tuple(SCHEMA_KINDS) == ("static", "per_item", "calls")
    with pytest.raises(ValueError, match="did you mean 'call_args'"):
        CHECKERS.get("callargs")
