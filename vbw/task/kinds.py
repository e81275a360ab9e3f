"""The contracts of a task's vocabularies, one base class each: a checker, an extract step,
a coercion and a schema source. vbw's own kinds subclass them (vbw.task.check,
vbw.task.extract, vbw.task.coerce, vbw.task.schema.sources), and so may a plugin's kind
(docs/reference/plugins.md). Imports vbw.task.base only.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

from vbw.task.base import StrictModel


class BaseChecker(StrictModel):
    """Decides whether an answer matches the item's gold (registry vbw.task.check.CHECKERS).
    `answers_complete`: the `gold_answers` stand for every right answer, so when none is
    schema-valid, no right answer is (mode=check says so)."""

    answers_complete: ClassVar[bool] = False
    # the groups `parts` puts an answer's parts in (none: the checker does not split it)
    part_groups: ClassVar[tuple[str, ...]] = ()

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether `answer` is right.

        Args:
            answer: the coerced answer read from the arm's text.
            gold: the item's gold.
            schema: the JSON Schema the arm ran under, or None.
        Returns:
            True when the answer is right.
        """
        raise NotImplementedError

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """Answers this checker calls right, for mode=check (none by default).

        Args:
            gold: the item's gold.
            schema: the answer schema the candidates are for, or None.
        Returns:
            Answers this checker calls right (at most vbw.task.check.CANDIDATES); [] when
            none can be built.
        """
        return []

    def parts(self, answer: Any, gold: Any, schema: Any = None) -> list[Part] | None:
        """The answer's verdict part by part of the gold, for per-field scoring of a task
        that names no fields (vbw.task.fields); None by default: not split.

        Args:
            answer: the coerced answer read from the arm's text, or None when it has none.
            gold: the item's gold.
            schema: the JSON Schema the arm ran under, or None.
        Returns:
            One Part per part of the gold, its group one of `part_groups`; or None when
            this gold is not split (every field of the item is then absent).
        """
        return None


class Part(NamedTuple):
    """One part of a gold (a call's parameter), the group it is counted in, and whether the
    answer got it right."""

    name: str
    group: str
    right: bool


class BaseStep(StrictModel):
    """One step of a free-text extraction chain (registry vbw.task.extract.STEPS)."""

    def apply(self, text: str, fields: dict[str, Any]) -> Any:
        """This step's candidate in `text`.

        Args:
            text: the model's text.
            fields: the item's fields.
        Returns:
            The raw candidate, or None when the text holds none.
        """
        raise NotImplementedError


class BaseCoercion(StrictModel):
    """Turns an extracted candidate into the answer a checker compares with gold (registry
    vbw.task.coerce.COERCIONS)."""

    def apply(self, value: Any) -> Any:
        """`value` as this coercion reads it.

        Args:
            value: a step's candidate.
        Returns:
            The answer the checker compares, or None when `value` does not coerce.
        """
        raise NotImplementedError


class BaseSchemaSource(StrictModel):
    """Gives each item its JSON Schema (registry vbw.task.schema.sources.SCHEMA_SOURCES)."""

    def for_item(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The schema this source gives the item.

        Args:
            fields: the item's fields.
        Returns:
            The item's JSON Schema.
        """
        raise NotImplementedError
