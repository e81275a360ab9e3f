"""The run config, validated once right after Hydra composes it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from vbw.resources import bundled
from vbw.task.arms import ARM_KINDS
from vbw.task.base import StrictModel
from vbw.validation import load_yaml, validate


class ModelConfig(StrictModel):
    """Which GGUF: a hub file (repo/revision/file/sha256), a pip package that ships one,
    or a local `path`. `name` keys the bundled replays. Precedence is path > package >
    repo, so a user can always override a hub model with a local copy (e.g. offline)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    repo: str | None = None
    revision: str | None = None
    file: str | None = None
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    package: str | None = None
    path: str | None = None


def bundled_model(name: str) -> ModelConfig:
    """The pinned model config conf/model/<name>.yaml, as the CLI composes it (tests and
    benchmarks use this so their model is the one the replays name, sha256 included)."""
    path = bundled("conf") / "model" / f"{name}.yaml"
    return validate(ModelConfig, load_yaml(path), source=str(path))


class EngineConfig(StrictModel):
    name: Literal["outlines", "llamacpp"]
    n_ctx: int = Field(default=4096, ge=256)
    kv_reuse: bool = True


class MaxTokens(StrictModel):
    free: int = Field(ge=1)
    json_: int = Field(ge=1, alias="json")
    package: int = Field(ge=1)


class ArmsConfig(StrictModel):
    name: str
    kinds: list[str] = Field(min_length=1)
    max_tokens: MaxTokens

    @field_validator("kinds")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in ARM_KINDS]
        if bad:
            raise ValueError(f"unknown arm kind {bad[0]!r}; valid: {', '.join(ARM_KINDS)}")
        return v


class Bootstrap(StrictModel):
    """Resamples are bounded: each costs a few numbers per arm and comparison, and 1e9
    would allocate gigabytes. The seed is a non-negative integer below 2**64 (numpy's
    SeedSequence takes no negative entropy)."""

    resamples: int = Field(default=2000, ge=100, le=1_000_000)
    seed: int = Field(default=42, ge=0, lt=2**64)


class Gate(StrictModel):
    wrong_valid_above: float | None = Field(default=None, ge=0.0, le=1.0)


Mode = Literal["auto", "replay", "live", "check"]


class RunConfig(StrictModel):
    """Everything but the task: a task is resolved apart (vbw.task.locate), because its
    relative data paths need the file it came from, which only the Hydra sources know."""

    model: ModelConfig
    engine: EngineConfig
    arms: ArmsConfig
    mode: Mode = "auto"
    n: int | None = Field(default=None, ge=1)
    replay: str | None = None
    replays_dir: str | None = None
    resume: bool = False
    allow_task_mismatch: bool = False
    threads: int | None = Field(default=None, ge=1)
    progress: Literal["auto", "on", "off"] = "auto"
    bootstrap: Bootstrap = Bootstrap()
    gate: Gate = Gate()
