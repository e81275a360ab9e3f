"""vbw.score.conformance: sound and exact per schema, summed by category and engine over
all schemas (one that does not compile is neither), mask percentiles in microseconds."""

from __future__ import annotations

import numpy as np

from vbw.score.conformance import Misjudged, SchemaOutcome, engine_report, figures


def _o(sid: str, cat: str, compiled: bool = True, **counts: int) -> SchemaOutcome:
    return SchemaOutcome(schema_id=sid, category=cat, compiled=compiled, **counts)


def test_sound_exact_and_compiled_by_category_and_overall() -> None:
    outcomes = [_o("a", "type", valid_accepted=2, invalid_rejected=1),
                _o("b", "type", valid_rejected=1, invalid_rejected=1),
                _o("c", "enum", invalid_accepted=1, valid_accepted=1),
                _o("d", "enum", compiled=False, reason="refused")]
    masks = [np.array([1000, 3000]), np.array([2000]), np.zeros(0, np.int64),
             np.zeros(0, np.int64)]
    wrong = [Misjudged(kind="rejected valid", schema_id="b", category="type", instance="i",
                       keyword="type", serialisation="compact", text="1", items=["x1", "x2"]),
             Misjudged(kind="accepted invalid", schema_id="c", category="enum", instance="j",
                       keyword="enum", serialisation="compact", text="2")]
    r = engine_report("e", "compact", outcomes, masks, wrong, 1.23456)
    assert (r.all.schemas, r.all.compiled, r.all.sound, r.all.exact) == (4, 3, 2, 2)
    assert (r.all.valid_rejected, r.all.invalid_accepted) == (1, 1)
    assert r.categories["type"].sound == 2 and r.categories["type"].exact == 1
    assert r.categories["enum"].sound == 0 and r.categories["enum"].exact == 1
    assert r.all.mask_us_median == 2.0 and r.all.steps_timed == 3
    assert r.categories["enum"].mask_us_median is None
    assert r.rejected_items == ["x1", "x2"] and r.findings_total == 2 and r.seconds == 1.235


def test_the_99th_percentile_is_numpys() -> None:
    ns = np.arange(1, 1001) * 1000
    f = figures([_o("a", "t")], ns)
    assert f.mask_us_p99 == round(float(np.quantile(ns, 0.99)) / 1000, 2) == 990.01
