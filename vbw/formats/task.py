"""The task file's JSON Schema, generated from TaskSpec so it can never describe another
format than the one vbw validates (tests/test_formats.py checks the committed copy)."""

from __future__ import annotations

from typing import Any

from vbw.task.spec import TaskSpec

DRAFT = "https://json-schema.org/draft/2020-12/schema"
TITLE = "vbw task file"
DESCRIPTION = ("One vbw task as pure YAML: where the items come from, how each arm is "
               "prompted, the named JSON Schemas, how answers are extracted and coerced, and "
               "how they are checked. Generated from vbw.task.spec.TaskSpec by "
               "`python -m vbw.formats`; do not edit by hand.")


def task_schema() -> dict[str, Any]:
    """TaskSpec's JSON Schema (validation mode, keys by alias) with a draft, title and text."""
    body = TaskSpec.model_json_schema(by_alias=True, mode="validation")
    body.pop("title", None)
    body.pop("description", None)
    return {"$schema": DRAFT, "title": TITLE, "description": DESCRIPTION, **body}
