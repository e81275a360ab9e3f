"""mode=conformance's result (report.json, field for field): per engine and schema, whether
it compiled, and per instance walked whether the engine's mask accepted it; summed into
sound (no invalid instance accepted) and exact (no valid instance rejected) per schema,
per keyword category and per engine, with the per-token mask time.

The walking is vbw.generate.conformance's; this module only holds and sums its records.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

FINDINGS_KEPT = 400  # findings listed per engine (all are counted)


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Misjudged(_M):
    """One instance the engine judged wrongly: a valid one it rejected (`kind` "rejected
    valid", the engine is inexact) or an invalid one it accepted ("accepted invalid",
    unsound). `token`/`char`/`piece`: where `cut_by`'s mask cut the walk: the engine's own
    for a rejected instance; for an accepted one, the reference engine's (where it went
    wrong); None: at the end (generation may not stop there), or no engine could say."""
    kind: Literal["rejected valid", "accepted invalid"]
    schema_id: str
    category: str
    instance: str
    keyword: str
    serialisation: str
    text: str
    token: int | None = None
    char: int | None = None
    piece: str | None = None
    cut_by: str | None = None
    items: list[str] = []


class SchemaOutcome(_M):
    """One schema under one engine: compiled (else why not, or "timed out"), its compile
    seconds, and per instance walk how many valid/invalid were accepted/rejected."""
    schema_id: str
    category: str
    compiled: bool
    reason: str = ""
    compile_seconds: float | None = None
    valid_accepted: int = 0
    valid_rejected: int = 0
    invalid_accepted: int = 0
    invalid_rejected: int = 0
    skipped: int = 0  # instance texts not walked (too long)

    @property
    def sound(self) -> bool:
        return self.compiled and self.invalid_accepted == 0

    @property
    def exact(self) -> bool:
        return self.compiled and self.valid_rejected == 0


class Figures(_M):
    """Schemas of a group under one engine: how many, compiled, sound and exact (of all
    schemas: one that does not compile is neither), instances wrongly judged, and the
    per-token mask time (microseconds; None: no step timed)."""
    schemas: int
    compiled: int
    sound: int
    exact: int
    valid_rejected: int
    invalid_accepted: int
    mask_us_median: float | None = None
    mask_us_p99: float | None = None
    steps_timed: int = 0


class EngineReport(_M):
    """One engine configuration over every schema."""
    engine: str
    whitespace: str
    label: str  # e.g. "outlines (compact)"
    all: Figures
    categories: dict[str, Figures]
    compile_seconds_median: float | None = None
    seconds: float  # wall seconds of this engine's run
    schemas: list[SchemaOutcome]
    findings: list[Misjudged]
    findings_total: int
    # every task item whose gold-shaped answer the engine rejected (all, not only listed)
    rejected_items: list[str] = []


class ConformanceReport(_M):
    mode: Literal["conformance"] = "conformance"
    source: str  # "suite draft2020-12" or "task <name>"
    tokenizer: dict[str, Any]  # the model whose tokenizer was used
    serialisations: str
    validity: str  # how an instance's verdict was decided
    schemas: int
    instances: int
    engines: list[EngineReport]
    versions: dict[str, str]


def figures(outcomes: list[SchemaOutcome], mask_ns: np.ndarray) -> Figures:
    """The group's counts, and the median and 99th percentile of its timed mask steps."""
    timed = mask_ns.size > 0
    return Figures(schemas=len(outcomes), compiled=sum(o.compiled for o in outcomes),
                   sound=sum(o.sound for o in outcomes), exact=sum(o.exact for o in outcomes),
                   valid_rejected=sum(o.valid_rejected for o in outcomes),
                   invalid_accepted=sum(o.invalid_accepted for o in outcomes),
                   mask_us_median=round(float(np.median(mask_ns)) / 1000, 2) if timed else None,
                   mask_us_p99=round(float(np.quantile(mask_ns, 0.99)) / 1000, 2)
                   if timed else None,
                   steps_timed=int(mask_ns.size))


def engine_report(engine: str, whitespace: str, outcomes: list[SchemaOutcome],
                  masks: list[np.ndarray], findings: list[Misjudged], seconds: float
                  ) -> EngineReport:
    """Sum one engine's schema outcomes (and their mask times, `masks[i]` for
    `outcomes[i]`) by category and overall; keep the first FINDINGS_KEPT findings.

    Args:
        engine: the engine's name.
        whitespace: its whitespace policy.
        outcomes: one per schema, in case order.
        masks: per schema, its timed mask steps in nanoseconds.
        findings: every instance judged wrongly, in case order.
        seconds: the engine's wall seconds.
    Returns:
        The engine's part of report.json.
    """
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, o in enumerate(outcomes):
        by_cat[o.category].append(i)

    def join(idx: list[int]) -> np.ndarray:
        parts = [masks[i] for i in idx if masks[i].size]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    compiles = [o.compile_seconds for o in outcomes if o.compile_seconds is not None]
    return EngineReport(
        engine=engine, whitespace=whitespace, label=f"{engine} ({whitespace})",
        all=figures(outcomes, join(list(range(len(outcomes))))),
        categories={c: figures([outcomes[i] for i in idx], join(idx))
                    for c, idx in by_cat.items()},
        compile_seconds_median=round(float(np.median(compiles)), 6) if compiles else None,
        seconds=round(seconds, 3), schemas=outcomes, findings=findings[:FINDINGS_KEPT],
        findings_total=len(findings),
        rejected_items=list(dict.fromkeys(i for f in findings if f.kind == "rejected valid"
                                          for i in f.items)))
