"""The task file format: a pure-YAML task, validated once into these models.

Every component is chosen by `kind` from a vocabulary (see extract, coerce, check,
schemas, and ID_SOURCES here; installed packages may add kinds, vbw.registry), and every model forbids unknown keys, so a typo fails loudly
at load time. The published JSON Schema of this format is generated from TaskSpec (see
vbw.formats).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from vbw.task.base import JinjaTemplate, JMESPathExpr, StrictModel
from vbw.task.check import Checker
from vbw.task.coerce import Coercion, IdentityCoercion
from vbw.task.extract import FreeStep, JsonExtract
from vbw.task.registry import Registry
from vbw.task.schema.sources import SchemaSource
from vbw.task.tools import ToolSpec

ID_SOURCES: Registry[StrictModel] = Registry("item id")
FIELD_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
MAX_FIELDS = 32  # fields a task may name (each is a column of every report table)


class JoinSpec(StrictModel):
    """A second file whose rows are merged into the first's, matched on field `key`.

    (Not `on`: YAML 1.1 reads a bare `on` as the boolean true.)"""

    path: str
    key: str


@ID_SOURCES.register
class IdFromPath(StrictModel):
    """The value at a JMESPath into the (joined) row."""

    kind: Literal["path"]
    path: JMESPathExpr


@ID_SOURCES.register
class IdFromRow(StrictModel):
    """`prefix` + the row's index from 0 in the (joined) file, e.g. gsm8k_test_0."""

    kind: Literal["row_index"]
    prefix: str = ""


IdSource = ID_SOURCES.union()


class GoldSpec(StrictModel):
    """Gold answer: a JMESPath into the row, then optional extraction steps and a coercion."""

    path: JMESPathExpr
    extract: list[FreeStep] = []
    coerce: Coercion = IdentityCoercion(kind="identity")


class FieldSpec(StrictModel):
    """One named field of the answer, scored on its own (docs/reference/task-format.md,
    "Fields"): its value in the JSON answer at `path`, coerced, checked against its gold by
    `check`. `free`: how a free-text arm states it (ordered steps, the first that yields a
    value wins); without it the field is n/a for free-text arms."""

    path: JMESPathExpr
    gold: GoldSpec
    coerce: Coercion = IdentityCoercion(kind="identity")
    check: Checker
    free: list[FreeStep] = []


class DatasetSpec(StrictModel):
    """Where the items come from: a JSONL/JSON file, its ids, named fields and gold."""

    path: str
    join: JoinSpec | None = None
    id: IdSource
    fields: dict[str, JMESPathExpr]
    gold: GoldSpec
    first: int | None = Field(default=None, ge=1)
    exclude: list[str] = Field(default=[], description=(
        "Ids of rows left out, before `first` (say why beside them): e.g. items whose "
        "gold contradicts the item's own declaration. Needs `id` of kind `path`."))

    @model_validator(mode="after")
    def _exclude_by_path_id(self) -> "DatasetSpec":
        if self.exclude and not isinstance(self.id, IdFromPath):
            raise ValueError("exclude needs id of kind path (row_index ids would shift)")
        return self


class PromptsSpec(StrictModel):
    """Jinja2 templates. Context: the item's fields, plus `schema` in json and package."""

    free: JinjaTemplate
    json_: JinjaTemplate = Field(alias="json")
    package: JinjaTemplate | None = None


class ExtractSpec(StrictModel):
    """How answers are read: free text through ordered steps (the first that yields an
    answer wins), JSON arms by a JMESPath into the first JSON object."""

    free: list[FreeStep] = Field(min_length=1)
    json_: JsonExtract = Field(default=JsonExtract(), alias="json")


class TaskSpec(StrictModel):
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
    fields: dict[Annotated[str, StringConstraints(pattern=FIELD_NAME)], FieldSpec] = Field(
        default={}, max_length=MAX_FIELDS, description=(
            "Named fields of the JSON answer, each scored on its own beside the answer "
            "(per-field accuracy, wrong-but-valid and paired comparisons)."))
    tool: ToolSpec = ToolSpec()

    @model_validator(mode="after")
    def _answer_schema_declared(self) -> "TaskSpec":
        if self.answer_schema not in self.schemas:
            raise ValueError(f"answer_schema {self.answer_schema!r} is not one of the "
                             f"schemas: {', '.join(self.schemas)}")
        return self

    def canonical(self) -> dict[str, Any]:
        """The definition as plain data (aliases, defaults filled) for hashing; `fields`
        only when it names some."""
        return self.model_dump(mode="json", by_alias=True,
                               exclude=None if self.fields else {"fields"})
