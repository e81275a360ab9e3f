"""The `tool` section: what function a tool_call[S] arm offers the model.

A tool_call arm sends schema S as the parameters of one function and forces that function
through the backend's native tool calling. The function's name and description are part of
what the model sees, so the task declares them; each is a literal string or `{path: ...}`
(a JMESPath into the item's fields), so BFCL items offer their own function. Without the
section the function is named after the schema label and described by the task's label.
Kept out of the task's generation hash: it changes only tool_call arms' prompts, which the
per-item prompt hash of those arms covers (vbw.task.runner.Task.prompt_hash).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from vbw.task.base import JMESPathExpr, StrictModel, field_names, search


class FromItem(StrictModel):
    """A value read from the item's fields by JMESPath (e.g. `function.description`)."""

    path: JMESPathExpr


class ToolSpec(StrictModel):
    """The function a tool_call[S] arm offers: each of `name` and `description` a literal
    or `{path: ...}` into the item's fields; null: the schema label / the task's label."""

    name: str | FromItem | None = Field(default=None, description=(
        "The function's name: a literal, or {path: ...} into the item's fields. null: the "
        "schema label. A name a server's dialect refuses is mapped as BFCL maps it ('.' to "
        "'_') and the mapping is recorded."))
    description: str | FromItem | None = Field(default=None, description=(
        "The function's description: a literal, or {path: ...} into the item's fields. "
        "null: the task's label."))


def resolve(value: str | FromItem | None, fields: dict[str, Any], default: str,
            what: str) -> str:
    """A literal as is, a path's string value from the item, or `default` when unset."""
    if value is None:
        return default
    if isinstance(value, str):
        return value
    found = search(value.path, fields)
    if not isinstance(found, str) or not found:
        raise ValueError(f"tool.{what}: path {value.path!r} gave "
                         f"{'nothing' if found is None else repr(found)[:60]}, not a "
                         f"non-empty string; the item's fields are: {field_names(fields)}")
    return found
