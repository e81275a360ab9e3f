"""The replay file's JSON Schema, generated from the models vbw reads replays with.

A replay is JSONL, so the schema describes one line: the header line `{"meta": ...}`, an
item line, or the end line `{"end": ...}`. The header is the vbw-replay/1 header or, for
the replays vbw's predecessor wrote, the validbutwrong 0.1 header (no `format` key).
What one line cannot say is left to vbw: the header comes first, an id appears once, an
item's arm keys are among the header's `arms`, and the end line comes last.
"""

from __future__ import annotations

from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from vbw.replay import EndV1, ItemRecord, ReplayHeader
from vbw.replay.legacy import LegacyHeader

DRAFT = "https://json-schema.org/draft/2020-12/schema"
TITLE = "vbw replay line"
DESCRIPTION = ("One line of a vbw replay (JSONL): line 1 is the header {\"meta\": ...}; then "
               "one item line per item, {\"id\", \"arms\": {arm key: {\"text\", ...}}}; a "
               "finished run ends with {\"end\": ...}. Generated from the models in "
               "vbw.replay by `python -m vbw.formats`; do not edit by hand.")


class HeaderLine(BaseModel):
    """Line 1."""

    model_config = ConfigDict(extra="forbid", title="header line")
    meta: Union[ReplayHeader, LegacyHeader] = Field(
        description="A vbw-replay/1 header, or a validbutwrong 0.1 header (no format key).")


class EndLine(BaseModel):
    """The last line of a finished run."""

    model_config = ConfigDict(extra="forbid", title="end line")
    end: EndV1


def replay_schema() -> dict[str, Any]:
    """oneOf header line / item line / end line (they exclude one another)."""
    body = TypeAdapter(Union[HeaderLine, ItemRecord, EndLine]).json_schema(mode="validation")
    lines = body.pop("anyOf")
    return {"$schema": DRAFT, "title": TITLE, "description": DESCRIPTION, "oneOf": lines,
            **body}
