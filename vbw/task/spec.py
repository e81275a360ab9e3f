"""The task file format: a pure-YAML task, validated once into these models.

Every component is chosen by `kind` from a closed vocabulary (see extract, coerce, check,
schemas), and every model forbids unknown keys, so a typo fails loudly at load time.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vbw.task.check import Checker
from vbw.task.coerce import Coercion, IdentityCoercion
from vbw.task.extract import FreeStep, JsonExtract, _jmes
from vbw.task.prompts import compile_template
from vbw.task.schemas import SchemaSource


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _jmespath(v: str) -> str:
    _jmes(v)
    return v


class JoinSpec(_Strict):
    """A second file whose rows are merged into the first's, matched on field `key`.

    (Not `on`: YAML 1.1 reads a bare `on` as the boolean true.)"""

    path: str
    key: str


class IdFromPath(_Strict):
    kind: Literal["path"]
    path: str

    @field_validator("path")
    @classmethod
    def _parses(cls, v: str) -> str:
        return _jmespath(v)


class IdFromRow(_Strict):
    """`prefix` + the row's index from 0 in the (joined) file, e.g. gsm8k_test_0."""

    kind: Literal["row_index"]
    prefix: str = ""


class GoldSpec(_Strict):
    """Gold answer: a JMESPath into the row, then optional extraction steps and a coercion."""

    path: str
    extract: list[FreeStep] = []
    coerce: Coercion = IdentityCoercion(kind="identity")

    @field_validator("path")
    @classmethod
    def _parses(cls, v: str) -> str:
        return _jmespath(v)


class DatasetSpec(_Strict):
    path: str
    join: JoinSpec | None = None
    id: Annotated[Union[IdFromPath, IdFromRow], Field(discriminator="kind")]
    fields: dict[str, str]
    gold: GoldSpec
    first: int | None = Field(default=None, ge=1)

    @field_validator("fields")
    @classmethod
    def _paths(cls, v: dict[str, str]) -> dict[str, str]:
        for name, path in v.items():
            try:
                _jmespath(path)
            except ValueError as e:
                raise ValueError(f"field {name!r}: {e}") from None
        return v


class PromptsSpec(_Strict):
    """Jinja2 templates. Context: the item's fields, plus `schema` in json and package."""

    free: str
    json_: str = Field(alias="json")
    package: str | None = None

    @field_validator("free", "json_", "package")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            compile_template(v)
        return v


class ExtractSpec(_Strict):
    free: list[FreeStep] = Field(min_length=1)
    json_: JsonExtract = Field(default=JsonExtract(), alias="json")


class TaskSpec(_Strict):
    """One task: where the items come from, how to prompt, which schemas, how to score."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    label: str = "answer accuracy"
    description: str = ""
    dataset: DatasetSpec
    prompts: PromptsSpec
    schemas: dict[str, SchemaSource] = Field(min_length=1)
    answer_schema: str
    extract: ExtractSpec
    coerce: Coercion = IdentityCoercion(kind="identity")
    check: Checker

    @model_validator(mode="after")
    def _answer_schema_declared(self) -> "TaskSpec":
        if self.answer_schema not in self.schemas:
            raise ValueError(f"answer_schema {self.answer_schema!r} is not one of the "
                             f"schemas: {', '.join(self.schemas)}")
        return self

    def canonical(self) -> dict[str, Any]:
        """The definition as plain data (aliases, defaults filled) for hashing."""
        return self.model_dump(mode="json", by_alias=True)
