"""The scoring result: per-arm metrics, paired comparisons, the ledger. This is what
report.json serialises, field for field."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vbw.score.paired import ALPHA

from vbw.task.findings import Finding

METRICS = ("schema_validity", "answer_accuracy", "wrong_but_valid")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def one_verdict(data: Any, p_key: str) -> Any:
    """A delta's `effect` follows from its p-value (`data[p_key]`): filled in when absent,
    refused when it disagrees (one verdict, never two: an effect is p < ALPHA)."""
    if isinstance(data, dict) and isinstance(data.get(p_key), (int, float)):
        decided = data[p_key] < ALPHA
        if data.setdefault("effect", decided) != decided:
            raise ValueError(f"effect={data['effect']} but {p_key}={data[p_key]} "
                             f"(an effect is p < {ALPHA})")
    return data


class Rate(_M):
    rate: float
    ci95: tuple[float, float]


class Quadrant(_M):
    valid_right: int
    valid_wrong: int
    invalid_right: int
    invalid_wrong: int


class ArmMetrics(_M):
    n: int
    schema_validity: Rate | None
    answer_accuracy: Rate
    wrong_but_valid: Rate | None
    executable_accuracy: Rate | None = None
    quadrant: Quadrant | None


class Delta(_M):
    """A paired difference of rates, `to` minus `from`: its bootstrap CI, the discordant
    counts (n10: the metric holds in `from` only; n01: in `to` only), the exact McNemar
    p-value and the minimum detectable effect (vbw.score.paired; None: none detectable).

    `effect` is THE verdict, the same in every report, summary and gate: the exact McNemar
    test rejects at ALPHA. The bootstrap CI is the interval of the effect's size, not a
    second test: at N=5 a CI of [+100, +100] sits beside p=0.062, no effect. `excludes_0`
    (whether that CI leaves out 0) stays for the published report.json format."""
    delta: float
    ci95: tuple[float, float]
    excludes_0: bool
    n10: int
    n01: int
    mcnemar_p: float
    mde: float | None
    effect: bool

    @model_validator(mode="before")
    @classmethod
    def _verdict(cls, data: Any) -> Any:
        return one_verdict(data, "mcnemar_p")


class Flips(_M):
    right_to_wrong: int
    wrong_to_right: int


class Comparison(_M):
    from_: str = Field(alias="from")
    to: str
    n: int
    role: str
    kind: Literal["headline", "secondary"]
    deltas: dict[str, Delta]
    transitions: dict[str, int]
    flips: Flips


class InterventionCounts(_M):
    """Interventions of one arm's constraint over a group of items that recorded them
    (vbw.score.interventions; where each landed: vbw.score.landing)."""
    items: int               # items in the group
    with_interventions: int  # items with at least one
    interventions: int
    per_item: float          # interventions / items (0.0 for no items)
    in_value: int            # landed in a value (string, number or literal)
    in_answer: int | None    # landed inside the answer's text (member names included);
    #                          None: the answer path is not locatable
    # items with one in the answer (the grammar changed the extracted answer);
    # None: not locatable
    answer_items: int | None = None
    value_share: float | None   # in_value / interventions; None: no interventions
    answer_share: float | None  # in_answer / interventions; None: none, or not locatable


class FlipInterventions(_M):
    """A headline comparison's right->wrong flips, by the `to` arm's interventions on the
    item: in the answer value (the grammar changed the answer itself), in structure only,
    elsewhere (keys or values off the answer path), none, or not recorded."""
    from_: str = Field(alias="from")
    to: str
    right_to_wrong: int
    answer_value: int | None  # None: the answer path is not locatable
    structure_only: int
    elsewhere: int
    none: int
    not_recorded: int


class ArmInterventions(_M):
    """One enforced arm's interventions. `recorded` false: no scored item's record has the
    field (an older replay, or a backend that cannot tell): not zero, unknown."""
    recorded: bool
    not_recorded: int  # scored items whose record lacks the field
    all: InterventionCounts | None = None
    by_outcome: dict[str, InterventionCounts] = {}  # right, wrong_but_valid, invalid
    flips: list[FlipInterventions] = []


class TaxFigures(_M):
    """The grammar's tax over a group of items that recorded it, in nats per item
    (vbw.score.tax): mean, median and how many paid none; None without items."""
    items: int
    mean: float | None = None
    median: float | None = None
    zero: int = 0


class ArmTax(_M):
    """One enforced arm's tax: over its items that recorded it, and by outcome (right,
    wrong_but_valid, invalid); `not_recorded`: scored items whose record lacks it."""
    not_recorded: int
    all: TaxFigures
    by_outcome: dict[str, TaxFigures]


class MeanCI(_M):
    """A mean over the items that recorded a figure, with its normal-approximation 95% CI
    (mean +- 1.96 sd / sqrt(items))."""
    mean: float
    ci95: tuple[float, float]
    items: int


class CompileCost(_M):
    """An enforced arm's schema compiles: the first compile of each schema (`first` of
    them, their median and total seconds) and the cache hits (`cached`, which cost none)."""
    first: int
    first_median: float | None  # None: no first compile (every answer found it compiled)
    first_total: float
    cached: int


class ArmCost(_M):
    """What one arm cost (vbw.score.cost), each figure over the scored items that recorded
    it (`recorded`: how many did, per figure) and None when none did: output tokens per
    answer, seconds per item (all its samples), milliseconds per output token, the median
    time to first token, and its compiles."""
    items: int
    enforced: bool  # whether the arm compiles a schema (its `compile`)
    recorded: dict[str, int]
    output_tokens: MeanCI | None
    seconds_per_item: MeanCI | None
    ms_per_token: float | None
    ttft_median: float | None
    compile: CompileCost | None


class SampledArm(_M):
    """One arm over k samples per item (vbw.score.samples), every rate over all N items
    with an item bootstrap that keeps each item's samples together: `accuracy` the mean
    fraction right; `pass_at` pass@k' for k' = 1..k (Chen et al.'s unbiased estimator);
    `majority` the vote over canonical answers (`majority_tied`: items whose top count
    was tied, the tie going to the answer sampled first); `all_right` all k samples right;
    validity and wrong-but-valid as mean fractions of samples; `tax` over every sample."""
    n: int
    accuracy: Rate
    pass_at: dict[str, Rate]
    majority: Rate
    majority_tied: int
    all_right: Rate
    schema_validity: Rate | None
    wrong_but_valid: Rate | None
    tax: ArmTax | None = None


class SampledDelta(_M):
    """A paired difference of per-item fractions, `to` minus `from`: its item-bootstrap
    CI, the items where `to` had more samples holding the metric (`more`) or fewer
    (`fewer`), the two-sided sign-flip permutation p (`test`: exact, or Monte Carlo past
    vbw.score.sampled.EXACT_SUPPORT_UP_TO; McNemar's when every nonzero difference has
    one size, always so at k = 1), and the verdict: an effect is p < ALPHA, as in Delta."""
    delta: float
    ci95: tuple[float, float]
    more: int
    fewer: int
    p: float
    test: Literal["mcnemar", "exact", "monte_carlo"]
    effect: bool

    @model_validator(mode="before")
    @classmethod
    def _verdict(cls, data: Any) -> Any:
        return one_verdict(data, "p")


class SampledComparison(_M):
    """A paired comparison of two arms' per-item fractions over k samples."""
    from_: str = Field(alias="from")
    to: str
    n: int
    role: str
    kind: Literal["headline", "secondary"]
    deltas: dict[str, SampledDelta]


class Sampled(_M):
    """k > 1 samples per item and arm: per-arm figures and paired comparisons on
    fractions; `monte_carlo`: the draws and the seed of a Monte Carlo sign-flip test."""
    k: int
    arms: dict[str, SampledArm]
    comparisons: list[SampledComparison]
    monte_carlo: dict[str, Any]


class FieldArm(_M):
    """One arm's figures on one field, over the field's items: how many it got right, its
    accuracy and (for an arm with a contract) its wrong-but-valid rate: schema-valid with
    this field wrong."""
    right: int
    accuracy: Rate
    wrong_but_valid: Rate | None


class FieldComparison(_M):
    """A paired comparison of two arms on one field: `accuracy` and (both arms with a
    contract) `wrong_but_valid` deltas, with the answer's verdict rule (Delta.effect)."""
    from_: str = Field(alias="from")
    to: str
    kind: Literal["headline", "secondary"]
    role: str
    deltas: dict[str, Delta]
    flips: Flips


class FieldMetrics(_M):
    """One field (vbw.score.fields): the items that have it (n), each arm that can state
    it, the arms that cannot (`not_read`: a free-text arm, with no free-text steps for the
    field), and the paired comparisons."""
    n: int
    arms: dict[str, FieldArm]
    not_read: list[str]
    comparisons: list[FieldComparison]


class Excluded(_M):
    n: int
    ids: list[str]
    reason: str
    reasons: dict[str, str] = {}


class Missing(_M):
    """Task items selected for scoring that the replay does not hold (all their ids)."""
    n: int
    ids: list[str]


class TaskCheck(_M):
    """The task checks of a run (vbw.task.audit) on the items it scores: findings that do
    not stop scoring (each with the item that shows it), and the checks skipped."""
    gold_checked: int
    warnings: list[str]
    findings: list[Finding]
    not_checked: list[str]


class TaskMismatch(_M):
    """A replay scored with allow_task_mismatch=true although its task hash differs from
    the task's: its texts may have been generated from other prompts, schemas or data."""
    replay_task_hash: str  # the replay header's meta.task_hash
    task_hash: str  # the scored task's generation hash


class Report(_M):
    task: str
    correctness_label: str
    n: int
    n_task: int  # items selected from the task (after `first` and `n`): n + excluded + missing
    mode: Literal["replay", "live"]
    excluded: Excluded
    missing: Missing
    coverage: str = ""  # "N scored of M in the task (...)": written by vbw.report
    meta: dict[str, Any]
    source: str
    provenance: str
    bootstrap: dict[str, Any]
    task_check: TaskCheck | None = None  # set by vbw.cli.job for a run
    task_mismatch: TaskMismatch | None = None  # scored with allow_task_mismatch=true
    arms: dict[str, ArmMetrics]
    comparisons: list[Comparison]
    interventions: dict[str, ArmInterventions] = {}  # per enforced arm (issue 19)
    # the grammar's tax per enforced arm that recorded it (vbw.score.tax); left out of
    # report.json when no arm did, so replays from before it report as they always have
    tax: dict[str, ArmTax] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # what each arm cost, from the replay's timings and token counts (vbw.score.cost)
    cost: dict[str, ArmCost] = {}
    # k > 1 samples per item and arm (vbw.score.samples); left out for one sample
    samples: Sampled | None = Field(default=None, exclude_if=lambda v: v is None)
    # per field, then "all fields" (vbw.score.fields); {}: the task has no fields
    fields: dict[str, FieldMetrics] = {}
    fields_from: str = ""  # what the fields are: the task's own, or the checker's parts
    ledger: list[dict[str, str]]
