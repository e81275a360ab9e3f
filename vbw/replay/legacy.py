"""The validbutwrong 0.1 header: the shape vbw's predecessor wrote, and its migration.

0.1 wrote no `format` key, nested the engine and model file under `engine`, and recorded
the end of the run (`ended`, `wall_seconds`) in the header. vbw reads those replays (the
bundled Qwen ones are 0.1), so this module names the fields vbw reads and maps them onto
the typed header's fields. 0.1 is frozen: keys vbw does not read are allowed and kept in
the header as written.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

# Keys only a vbw-replay/1 header has: a format-less header carrying one of them is a
# version-1 header that forgot its `format`, not a 0.1 header.
V1_ONLY = ("task_hash", "arms", "model", "kv_reuse", "canary_seconds", "load_seconds",
           "notes", "backend")


def _not_v1(schema: dict[str, Any]) -> None:
    schema["not"] = {"anyOf": [{"required": [k]} for k in ("format", *V1_ONLY)]}


class LegacyEngine(BaseModel):
    model_config = ConfigDict(extra="allow")
    engine: str | None = None
    model_file: str | None = None
    load_seconds: float | None = None


class LegacyHeader(BaseModel):
    """A validbutwrong 0.1 header (no `format` key), as far as vbw reads it."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_not_v1,
                              title="validbutwrong 0.1 header")
    task: str
    n: int | None = None
    engine: LegacyEngine | None = None
    model_sha256: str | None = None
    model_source: str | None = None
    versions: dict[str, str | None] | None = None
    hardware: dict[str, Any] | None = None
    decoding: str | dict[str, Any] | None = None
    max_tokens: dict[str, int] | None = None
    started: str | None = None
    wall_seconds: float | None = None
    ended: str | None = None

    def typed_fields(self) -> dict[str, Any]:
        """The same facts under the typed header's field names; what 0.1 did not record
        (task hash, arms, KV reuse, the model's name) stays unset."""
        eng = self.engine or LegacyEngine()
        model = {"file": eng.model_file, "sha256": self.model_sha256,
                 "source": self.model_source}
        decoding = {"strategy": self.decoding} if isinstance(self.decoding, str) else self.decoding
        return {"task": self.task, "n": self.n, "engine": eng.engine,
                "model": model if any(model.values()) else None, "versions": self.versions,
                "hardware": self.hardware, "decoding": decoding,
                "max_tokens": self.max_tokens, "started": self.started,
                "load_seconds": eng.load_seconds}


def looks_like_v1(data: dict[str, Any]) -> bool:
    """A format-less header with keys 0.1 never wrote (or a plain-string engine)."""
    return any(k in data for k in V1_ONLY) or isinstance(data.get("engine"), str)
