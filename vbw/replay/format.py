"""The replay file: the versioned contract between generation and scoring.

JSONL. Line 1 is `{"meta": {...}}`; then one `{"id", "arms": {arm_key: {...}}}` line per
item, appended and flushed as each item completes; a finished run ends with an
`{"end": {...}}` line. Version 1 headers carry `"format": "vbw-replay/1"`; a header with no
`format` is a validbutwrong 0.1 replay (version 0), read as it is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FORMAT = "vbw-replay/1"


class ArmRecord(BaseModel):
    """One arm's generation for one item, or why it could not be generated."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    seconds: float = 0.0
    compile_seconds: float = 0.0
    n_tokens: int = 0
    ttft_seconds: float | None = None
    finish_reason: Literal["stop", "length"] | None = None
    reuses: str | None = None
    unsupported_schema: str | None = None


class ItemRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    arms: dict[str, ArmRecord]
    item_seconds: float | None = None
    prompt_hash: str | None = None

    @property
    def unsupported(self) -> str | None:
        """The first unsupported-schema reason among the arms, if any."""
        return next((a.unsupported_schema for a in self.arms.values()
                     if a.unsupported_schema), None)


class ModelInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    file: str
    sha256: str
    source: str


class MetaV1(BaseModel):
    """Header of a version-1 replay: enough to know exactly what produced the texts."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["vbw-replay/1"] = FORMAT
    task: str
    task_hash: str
    n: int
    engine: str
    arms: list[str]
    model: ModelInfo
    versions: dict[str, str | None]
    hardware: dict[str, Any]
    decoding: dict[str, Any]
    max_tokens: dict[str, int]
    kv_reuse: bool
    canary_seconds: dict[str, float]
    started: str
    load_seconds: float | None = None


class EndV1(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ended: str
    wall_seconds: float
    items: int


class Replay(BaseModel):
    """A replay as read: header (v1 model or the legacy dict), items, and end marker."""

    model_config = ConfigDict(extra="forbid")
    path: str
    version: int
    meta: dict[str, Any]
    records: list[ItemRecord] = Field(default_factory=list)
    end: dict[str, Any] | None = None
    torn_tail: bool = False

    @property
    def task(self) -> str | None:
        return self.meta.get("task")

    def describe(self) -> str:
        """One human line on where the texts came from (for the report header)."""
        m = self.meta
        if self.version == 0:
            eng = m.get("engine", {})
            engine, model = eng.get("engine", "?"), eng.get("model_file", "?")
            cpu = m.get("hardware", {}).get("cpu", "?")
            return (f"generated {m.get('started', '?')} in {m.get('wall_seconds', '?')} s on "
                    f"{cpu} ({engine}, {model}) by validbutwrong "
                    f"{m.get('versions', {}).get('validbutwrong', '0.1')}")
        # Summed item seconds, not the end marker's wall time: a resumed replay's wall time
        # covers only its last run.
        busy = sum(r.item_seconds or 0.0 for r in self.records)
        when = (f"generated {m['started']} to {self.end['ended']}, {busy:.0f} s summed over "
                f"{len(self.records)} items" if self.end else
                f"generation started {m['started']}, still incomplete")
        return (f"{when} on {m['hardware'].get('cpu', '?')} ({m['engine']}, "
                f"{m['model']['file']}) by vbw {m['versions'].get('vbw', '?')}")
