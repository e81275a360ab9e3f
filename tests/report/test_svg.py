"""report.html's forest plot (vbw.report.svg.render_forest): one row per comparison and
metric, drawn by the verdict, every string escaped, nothing that needs a script or a
fetch (the page's CSP forbids both)."""

from __future__ import annotations

import re

from tests.report.test_escape import EVIL
from vbw.report.svg import render_forest
from vbw.score.results import Comparison, Delta, Flips, Report


def _delta(n10: int, n01: int, p: float, lo: float, hi: float) -> Delta:
    return Delta(delta=(n01 - n10) / 40, ci95=(lo, hi), excludes_0=lo > 0 or hi < 0,
                 n10=n10, n01=n01, mcnemar_p=p, mde=0.2)


def _report(label: str, comparisons: list[Comparison]) -> Report:
    return Report.model_construct(task=label, correctness_label=label, n=40, comparisons=comparisons)


def _comparison(src: str, dst: str, deltas: dict[str, Delta]) -> Comparison:
    return Comparison(from_=src, to=dst, n=40, role="headline", kind="headline", deltas=deltas,
                      transitions={}, flips=Flips(right_to_wrong=0, wrong_to_right=0))


def test_one_row_per_comparison_and_metric_marked_by_the_verdict() -> None:
    c1 = _comparison("prompt_json[a]", "constrained[a]", {
        "schema_validity": _delta(0, 20, 1.9e-6, 0.35, 0.65),
        "answer_accuracy": _delta(2, 9, 0.065, 0.0, 0.35)})  # CI clear of 0, p > 0.05
    c2 = _comparison("unconstrained", "constrained[a]", {
        "answer_accuracy": _delta(12, 2, 0.013, -0.45, -0.05)})
    svg = render_forest(_report("acc", [c1, c2]))
    groups = re.findall(r'<g class="(effect|none)">', svg)
    assert groups == ["effect", "none", "effect"]
    hollow = re.findall(r'<circle [^>]*fill="#fff"', svg)
    assert len(hollow) == 1  # the one without an effect, whatever its CI
    assert ("prompt_json[a] → constrained[a], acc: +17.5 pts observed; not distinguishable "
            "from zero at N=40 (p=0.065, MDE ±20.0 pts); 95% CI [+0.0, +35.0] pts") in svg
    # the axis spans every CI (-45 to +65 points) and 0, in ticks of 20, inside the plot
    ticks = re.findall(r'text-anchor="middle" fill="#444">([^<]+)<', svg)
    assert ticks == ["-60", "-40", "-20", "+0", "+20", "+40", "+60", "+80"]
    ends = [float(x) for x in re.findall(r'<line x1="([\d.]+)" y1="\d+" x2="[\d.]+" y2="\d+" '
                                         r'stroke="#[0-9a-f]+" stroke-width="2"', svg)]
    assert len(ends) == 3 and all(400 <= x <= 760 for x in ends)
    assert 'stroke-dasharray="4 3"' in svg


def test_hostile_strings_are_escaped_and_nothing_is_fetched() -> None:
    c = _comparison(EVIL, "constrained[a]", {"answer_accuracy": _delta(1, 3, 0.62, -0.1, 0.2)})
    svg = render_forest(_report(EVIL, [c]))
    assert "<script" not in svg and "<img" not in svg.lower()
    assert "&lt;" in svg
    assert "href" not in svg and "<style" not in svg and "on" + "load" not in svg


def test_no_comparison_no_plot() -> None:
    assert render_forest(_report("acc", [])) == ""
