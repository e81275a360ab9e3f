"""vbw.report.cost: the cost table's cells ("not recorded", never 0) and report.html's
picture of accuracy against seconds per item, escaped and placed on a log scale."""

from __future__ import annotations

import re

from vbw.report.cost import NOT_RECORDED, PAD, H, W, cells, render_cost_svg
from vbw.score.results import ArmCost, ArmMetrics, CompileCost, MeanCI, Rate, Report


def _cost(seconds: float | None, enforced: bool = False) -> ArmCost:
    s = None if seconds is None else MeanCI(mean=seconds, ci95=(seconds, seconds), items=2)
    return ArmCost(items=2, enforced=enforced, recorded={}, output_tokens=None,
                   seconds_per_item=s, ms_per_token=None, ttft_median=None,
                   compile=CompileCost(first=0, first_median=None, first_total=0.0, cached=2)
                   if enforced else None)


def _report(costs: dict[str, ArmCost], acc: dict[str, float]) -> Report:
    arms = {k: ArmMetrics(n=2, schema_validity=None, answer_accuracy=Rate(rate=a, ci95=(a, a)),
                          wrong_but_valid=None, quadrant=None) for k, a in acc.items()}
    return Report.model_construct(task="t", correctness_label="accuracy <b>", arms=arms,
                                  cost=costs)


def test_cells_say_not_recorded_and_cache_hits() -> None:
    assert cells(_cost(None)) == [NOT_RECORDED, NOT_RECORDED, NOT_RECORDED, NOT_RECORDED,
                                  "not enforced"]
    assert cells(_cost(1.0, enforced=True))[4] == "none; 2 cached"


def test_the_picture_places_each_arm_by_log_seconds_and_accuracy() -> None:
    svg = render_cost_svg(_report({"<script>": _cost(0.1), "b": _cost(10.0), "c": _cost(None)},
                                  {"<script>": 0.5, "b": 1.0, "c": 0.2}))
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "accuracy &lt;b&gt;" in svg
    dots = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"',
                                                        svg)]
    assert dots == [(PAD, H - PAD - 0.5 * (H - 2 * PAD)), (W - PAD, PAD)]  # c: no seconds
    assert render_cost_svg(_report({"c": _cost(None)}, {"c": 0.2})) == ""
