"""The run config, validated once right after Hydra composes it."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, TypeVar

from pydantic import Field, field_validator, model_validator

from vbw.registry import Registry
from vbw.resources import bundled
from vbw.task.arms import ALL_ARM_KINDS, Arm, select_arms
from vbw.task.base import StrictModel
from vbw.validation import load_yaml, validate

T = TypeVar("T")

# A mode (vbw.modes.MODES), an output writer (vbw.report.writers.OUTPUTS), an engine
# (vbw.generate.engines.ENGINES) or a server dialect (vbw.generate.dialects.DIALECTS) is a
# name of a registry that lives above this layer and that installed packages extend: the
# name is checked against its registry by vbw.cli.job, before any work, in one line that
# lists the known ones.
KindName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]


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
    gpu_layers: int = Field(default=0, ge=-1)  # layers offloaded to a GPU: 0 none, -1 all
    # llama.cpp's extra weight buffer types (AMX, CPU_REPACK): auto is off on a CPU with AMX,
    # where they crash (vbw.generate.repack), and llama.cpp's default (on) elsewhere
    repack: Literal["auto", "on", "off"] = "auto"


def bundled_model(name: str) -> ModelConfig:
    """The pinned model config conf/model/<name>.yaml, as the CLI composes it (tests and
    benchmarks use this so their model is the one the replays name, sha256 included)."""
    path = bundled("conf") / "model" / f"{name}.yaml"
    return validate(ModelConfig, load_yaml(path), source=str(path))


class BackendSettings(StrictModel):
    """What every backend kind's config declares beside its fields (ClassVars, so no
    config file sets them): where its implementation is, what it needs installed, and what
    a live run may ask of it. The kind is its `name: Literal[...]` tag; the class joins
    BACKENDS with `@BACKENDS.register` here, or from an installed package through an entry
    point of group `vbw.backends` naming the class.

    `provider` is "module:Class" of its vbw.generate.providers.Provider, imported only by
    a live run, so a replay run never loads the live stack. `requires` are the
    distributions whose versions a replay header records. `can_constrain` False: the
    backend cannot enforce a schema, so a live run refuses constrained arms (one line,
    exit 2) and runs no canary, instead of calling unconstrained text constrained.
    `tools_refused` non-empty: why the kind cannot run tool_call arms (native tool calling
    with a forced function); a live run then refuses them at start in one line, exit 2.
    `named_by` maps a field whose value is a name of a registry above this layer to that
    registry, "module:NAME"; vbw.cli.job looks the name up before any work.
    """

    provider: ClassVar[str]
    requires: ClassVar[tuple[str, ...]] = ()
    install_hint: ClassVar[str] = ""
    can_constrain: ClassVar[bool] = True
    tools_refused: ClassVar[str] = "it has no native tool calling"
    named_by: ClassVar[dict[str, str]] = {}

    @property
    def in_flight(self) -> int:
        """Items generated at once (1 unless the kind has a `concurrency` setting)."""
        return 1

    def replay_key(self, model: "ModelConfig", engine: "EngineConfig") -> tuple[str, str]:
        """The model and engine a recorded replay is keyed by (vbw.modes.replay).

        Args:
            model: the run's model config.
            engine: the run's engine config.
        Returns:
            (model name, engine name); by default the model config's name and the engine
            (`<engine>-compact` under compact whitespace).
        """
        return model.name, (engine.name if engine.whitespace == "flexible"
                            else f"{engine.name}-compact")


BACKENDS: Registry[BackendSettings] = Registry("backend", tag="name", group="vbw.backends")


@BACKENDS.register
class LocalBackendConfig(BackendSettings):
    """The model in this process: llama-cpp-python, with the `engine` group's engine."""

    provider: ClassVar[str] = "vbw.generate.local:LocalProvider"
    requires: ClassVar[tuple[str, ...]] = ("llama-cpp-python",)
    tools_refused: ClassVar[str] = (
        "in-process tool calling needs the model's chat template to accept tools and the "
        "model's call syntax declared in its model config, to constrain the call the way "
        "the model writes it; vbw declares no call syntax for any model yet")
    name: Literal["local"]


@BACKENDS.register
class OpenAIBackendConfig(BackendSettings):
    """Any OpenAI-compatible chat server. The schema goes out in the server's own
    structured-output dialect, which is then the run's engine (`server-<dialect>`). The
    API key is read from the environment variable named here, never from the config, so
    it cannot reach a replay, a report or `--cfg`."""

    provider: ClassVar[str] = "vbw.generate.server.kind:OpenAIProvider"
    tools_refused: ClassVar[str] = ""  # tools + a forced tool_choice (vbw.generate.tools)
    named_by: ClassVar[dict[str, str]] = {"dialect": "vbw.generate.dialects:DIALECTS"}
    name: Literal["openai"]
    base_url: str = Field(pattern=r"^https?://")
    model: str = Field(min_length=1)  # the served model id
    dialect: KindName = Field(description="How the server wants a schema, a forced call "
                              "and greedy decoding: a dialect of vbw.generate.dialects.")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    concurrency: int = Field(default=1, ge=1, le=64)
    timeout: float = Field(default=120.0, gt=0, le=3600)  # seconds per request, all of it
    max_reply_bytes: int = Field(default=16 * 1024 * 1024, ge=1024, le=1 << 34)
    max_retries: int = Field(default=4, ge=0, le=20)
    stream: bool = True  # stream responses to measure time to first token

    @property
    def engine(self) -> str:
        return f"server-{self.dialect}"

    @property
    def in_flight(self) -> int:
        return self.concurrency

    def replay_key(self, model: "ModelConfig", engine: "EngineConfig") -> tuple[str, str]:
        """The served model id (made safe as a folder name) and `server-<dialect>`."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.model), self.engine


BackendConfig = BACKENDS.union()


class EngineConfig(StrictModel):
    """The in-process backend's constraint engine. `name` is an engine of
    vbw.generate.engines.ENGINES (a module there, or an installed package's entry point of
    group `vbw.engines`), checked by vbw.cli.job before any work (no model is loaded and no
    item read for a misspelt engine)."""

    name: KindName
    n_ctx: int = Field(default=4096, ge=256)
    kv_reuse: bool = True
    greedy_first: bool = True  # exact shortcut: mask only when the argmax is not allowed
    whitespace: Literal["flexible", "compact"] = "flexible"  # engine's own rule, or none
    # record the grammar's tax (vbw.generate.sampling); it needs the engine's full mask at
    # every step, which costs the llamacpp engine a third to a half of its decode speed
    # (docs/performance.md): false leaves it unrecorded, the texts unchanged
    tax: bool = True


class MaxTokens(StrictModel):
    free: int = Field(ge=1)
    json_: int = Field(ge=1, alias="json")
    package: int = Field(ge=1)


class ArmsConfig(StrictModel):
    """Which arms run or score: the kinds, and (`schemas`, null: all) the task's schema
    labels whose arms do, e.g. `arms.schemas=[reasoning]` for GSM8K's reasoning schema
    alone. Selecting arms never edits the task, so its generation hash, and with it a
    replay's match to the task, stays as it is."""

    name: str
    kinds: list[str] = Field(min_length=1)
    schemas: list[str] | None = Field(default=None, min_length=1)
    max_tokens: MaxTokens

    @field_validator("schemas", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    def select(self, task: str, schemas: list[str], answer_schema: str) -> list[Arm]:
        """The task's arms this config selects; a label the task does not declare is
        refused in one line that lists those it does."""
        return select_arms(task, schemas, answer_schema, self.kinds, self.schemas)

    @field_validator("kinds")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [k for k in v if k not in ALL_ARM_KINDS]
        if bad:
            raise ValueError(f"unknown arm kind {bad[0]!r}; valid: {', '.join(ALL_ARM_KINDS)}")
        return v


class Bootstrap(StrictModel):
    """Resamples are bounded: each costs a few numbers per arm and comparison, and 1e9
    would allocate gigabytes. The seed is a non-negative integer below 2**64 (numpy's
    SeedSequence takes no negative entropy)."""

    resamples: int = Field(default=2000, ge=100, le=1_000_000)
    seed: int = Field(default=42, ge=0, lt=2**64)


MAX_SAMPLES = 100  # decoding.samples: answers per item and arm


class DecodingConfig(StrictModel):
    """How every arm picks its tokens: greedy at temperature 0 (the default, and exactly
    the decoding of every replay made before sampling existed), else sampled at
    `temperature` after the truncations `top_k` (0: off), `top_p` (1: off) and `min_p`
    (0: off), applied to the distribution the arm's grammar left (vbw.generate.sampling).
    `samples` answers per item and arm (k; sample 1 is the one every report has always
    read). Each draw's seed derives from (`seed`, item id, arm key, sample index), so a
    resumed, sharded or merged run gives the same replay as one uninterrupted run."""

    temperature: float = Field(default=0.0, ge=0.0, le=10.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    top_k: int = Field(default=0, ge=0, le=1_000_000)
    min_p: float = Field(default=0.0, ge=0.0, lt=1.0)
    seed: int = Field(default=1234, ge=0, lt=2**31)
    samples: int = Field(default=1, ge=1, le=MAX_SAMPLES)

    @property
    def greedy(self) -> bool:
        """Temperature 0: the argmax, whatever the truncations say."""
        return self.temperature == 0.0

    def truncations(self) -> dict[str, float | int]:
        """The truncation settings that are not off (name -> value)."""
        on = {"top_k": self.top_k != 0, "top_p": self.top_p != 1.0, "min_p": self.min_p != 0.0}
        return {k: getattr(self, k) for k, v in on.items() if v}


class BatchConfig(StrictModel):
    """In-process live generation: how many sequences one llama.cpp decode carries
    (vbw.generate.batched). null: `IN_PROCESS` in process (the best of
    tests/benchmarks/bench_batched.py on the reference 2-core machine), nothing for a
    server, which batches through backend.concurrency. 1 is the one-sequence loop of every
    replay made before the setting; more decode that many completions at once (of several
    items in flight), each in a KV stream of its own. Recorded in the replay header
    (`batch`) when above 1: resume and merge refuse a mix.
    `flash_attn`: llama.cpp's flash attention in the batch's context (more than one
    sequence in process; the one-sequence loop keeps llama.cpp's default kernels). On (the
    default): the benchmark's fastest; other kernels than the one-sequence loop's, so
    greedy texts differ from it (counted in docs/performance.md), but not with the batch:
    a text is the same whichever sequences share its decode, so resume, shards and merge
    stay byte-identical. Off: every text is the one-sequence loop's, whatever the batch.
    Recorded (`flash_attn`) with `batch`."""

    IN_PROCESS: ClassVar[int] = 16
    sequences: int | None = Field(default=None, ge=1, le=32)
    flash_attn: bool = True

    def resolved(self, in_process: bool) -> int:
        """The sequences per decode of a run in process or not (null resolved)."""
        if self.sequences is not None:
            return self.sequences
        return self.IN_PROCESS if in_process else 1


class Gate(StrictModel):
    wrong_valid_above: float | None = Field(default=None, ge=0.0, le=1.0)


class Shard(StrictModel):
    """One job's part of a live run spread over `count` jobs: the item at position p of
    the run's selection (after `first` and `n`, in task order) belongs to shard
    p mod count, so every shard holds about the same number of items and the shards of
    one run hold every item exactly once. count=1 (the default) is the whole run."""

    index: int = Field(default=0, ge=0)
    count: int = Field(default=1, ge=1, le=10_000)

    @model_validator(mode="after")
    def _index_below_count(self) -> "Shard":
        if self.index >= self.count:
            raise ValueError(f"shard.index {self.index} must be below shard.count "
                             f"{self.count} (0 <= index < count)")
        return self

    def take(self, seq: list[T]) -> list[T]:
        """This shard's elements of `seq` (positions index, index+count, ...)."""
        return seq[self.index::self.count]


class CompareConfig(StrictModel):
    """mode=compare (vbw.modes.compare) reads the root `replays=[A,B,...]` (the reference
    first); `fail_if_worse` entries are `ARM:METRIC`, checked against the arm grammar and
    the metric names when the replays are read."""

    allow_task_change: bool = False  # compare replays whose task hashes differ
    fail_if_worse: list[str] = []  # exit 1 if any is detectably worse than the reference

    @field_validator("fail_if_worse", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v



class ConformanceConfig(StrictModel):
    """mode=conformance (vbw.modes.conformance): each engine of `engines` in each policy of
    `whitespace`, over the task's schemas or, with `suite` set, over the vendored
    JSON-Schema-Test-Suite; `tokenizer` is a conf/model name or a path to any GGUF (only
    its vocabulary is used: nothing is generated)."""

    tokenizer: str = "smollm2_135m"
    engines: list[KindName] = ["outlines", "llamacpp", "llguidance"]
    whitespace: list[Literal["flexible", "compact"]] = ["flexible", "compact"]
    suite: Literal["draft2020-12"] | None = None
    schema_seconds: float = Field(default=60.0, gt=0, description=(
        "Time limit of one schema's compile and walks per engine (then: timed out)."))

    @field_validator("engines", "whitespace", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v


class RunConfig(StrictModel):
    """Everything but the task: a task is resolved apart (vbw.task.locate), because its
    relative data paths need the file it came from, which only the Hydra sources know."""

    model: ModelConfig
    backend: BackendConfig = LocalBackendConfig(name="local")
    engine: EngineConfig
    arms: ArmsConfig = Field(description=(
        "A scored replay's own arms (its meta.arms) unless the command line selects arms "
        "(vbw.modes.selection)."))
    mode: KindName = "auto"  # a mode of vbw.modes.MODES
    n: int | None = Field(default=None, ge=1, description=(
        "The task's first N items (after the task's `first`); null: all, and the items a "
        "scored replay lacks past its own n (meta.n) are not counted missing."))
    replay: str | None = None
    replays_dir: str | None = None
    resume: bool = False
    allow_task_mismatch: bool = Field(default=False, description=(
        "Score or resume a replay whose task hash differs from the task's; a scored one is "
        "said on stderr and in the reports (report.json `task_mismatch`)."))
    threads: int | None = Field(default=None, ge=1)
    progress: Literal["auto", "on", "off"] = "auto"
    bootstrap: Bootstrap = Bootstrap()
    decoding: DecodingConfig = DecodingConfig()
    batch: BatchConfig = BatchConfig()
    gate: Gate = Gate()
    shard: Shard = Shard()
    replays: list[str] | None = None  # mode=merge: shard replays (files or folders)
    compare: CompareConfig = CompareConfig()
    conformance: ConformanceConfig = ConformanceConfig()
    # writers of vbw.report.writers.OUTPUTS (null: vbw's own, all of them); json always
    outputs: list[KindName] | None = None
