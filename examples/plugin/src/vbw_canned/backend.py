"""The `canned` backend: answers from a JSONL file of canned texts, for testing a task
end to end (prompts, extraction, checking, the report) without a model.

Each line is `{"text": ..., "contains": ...}`; a request gets the text of the first line
whose `contains` occurs in its last message (a line without `contains` matches any).

It cannot enforce a schema, and says so: `can_constrain = False`. vbw then refuses the
constrained and reason_then_constrain arms in one line before the run starts (select
`arms.kinds=[unconstrained,prompt_json]`) and skips the canary, which only a binding
constraint passes, instead of calling canned text constrained.
The replay header records the file as the "model": its name, sha256 and path.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from vbw.config import BackendSettings, EngineConfig, ModelConfig
from vbw.errors import ConfigError, EngineError, UnsupportedSchema
from vbw.generate.backend import Backend, GenerateConfig, Generation, Message
from vbw.generate.model import ModelFile
from vbw.generate.providers import Opened, Provider
from vbw.replay import ModelInfo

REASON = "backend canned answers from a file: it cannot constrain to a schema"


class CannedBackendConfig(BackendSettings):
    """backend=canned: `texts` is the JSONL file of canned answers."""

    provider: ClassVar[str] = "vbw_canned.backend:CannedProvider"
    requires: ClassVar[tuple[str, ...]] = ("vbw-canned",)
    install_hint: ClassVar[str] = "pip install vbw-canned"
    can_constrain: ClassVar[bool] = False
    name: Literal["canned"]
    texts: str = Field(min_length=1)

    def replay_key(self, model: ModelConfig, engine: EngineConfig) -> tuple[str, str]:
        return Path(self.texts).stem, "canned"


def load_texts(path: Path) -> list[dict[str, str]]:
    """The file's lines; ConfigError in one line naming the file, line and problem."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"backend.texts: cannot read {path}: {e.strerror}") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not (isinstance(row, dict) and isinstance(row.get("text"), str)
                and isinstance(row.get("contains", ""), str)):
            raise ConfigError(f"{path}:{n}: expected {{\"text\": str, \"contains\": str}}")
        out.append(row)
    if not out:
        raise ConfigError(f"backend.texts: {path} holds no canned text")
    return out


class CannedBackend(Backend):
    can_constrain = False

    def __init__(self, texts: list[dict[str, str]]) -> None:
        self.engine = "canned"
        self.texts = texts

    def compile(self, schema: Mapping[str, Any]) -> float:
        raise UnsupportedSchema(REASON)

    def generate(self, messages: Sequence[Message], config: GenerateConfig) -> Generation:
        if config.schema_ is not None:
            raise UnsupportedSchema(REASON)
        last = messages[-1]["content"] if messages else ""
        for row in self.texts:
            if row.get("contains", "") in last:
                text = row["text"]
                return Generation(text=text, n_tokens=len(text.split()), seconds=0.0,
                                  ttft_seconds=None, finish_reason="stop")
        raise EngineError(f"no canned text matches the message {last[:60]!r}")


class CannedProvider(Provider):
    def prepare(self, backend: CannedBackendConfig, model: ModelConfig) -> ModelFile | None:
        path = Path(backend.texts).expanduser().resolve()
        load_texts(path)  # refused now, in one line, before the run is announced
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return ModelFile(path=str(path), sha256=digest, source="path", file=path.name)

    def planned(self, backend: CannedBackendConfig, model: ModelConfig, engine: EngineConfig,
                mf: ModelFile | None) -> dict[str, Any]:
        assert mf is not None
        return {"engine": "canned",
                "model": ModelInfo(name=Path(mf.path).stem, file=mf.file, sha256=mf.sha256,
                                   source=f"path:{mf.path}"),
                "decoding": {"strategy": "canned"}, "kv_reuse": False}

    def open(self, backend: CannedBackendConfig, model: ModelConfig, engine: EngineConfig,
             mf: ModelFile | None, threads: int | None) -> Opened:
        start = time.perf_counter()
        assert mf is not None
        texts = load_texts(Path(mf.path))
        return Opened(CannedBackend(texts), round(time.perf_counter() - start, 3))
