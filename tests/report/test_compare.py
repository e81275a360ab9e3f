"""mode=compare's report.md: hostile labels, paths and ids stay inert, p-values are never
rounded across alpha, and the pair of files is written whole (report.json last)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.report.test_escape import EVIL
from vbw.report.compare import render_compare, write_compare
from vbw.report.markdown import p_value
from vbw.score.compare import (ArmPair, CompareReport, LeftOut, MetricPair, ReplayComparison,
                               ReplaySide)
from vbw.score.results import Delta


def _report(label: str) -> CompareReport:
    d = Delta(delta=-10 / 12 + 2 / 12, ci95=(-0.9, -0.3), excludes_0=True, n10=10, n01=2,
              mcnemar_p=0.0386, mde=0.4)
    arm = ArmPair(identical=1, identical_share=1 / 12,
                  metrics={"answer_accuracy": MetricPair(rate_from=10 / 12, rate_to=2 / 12,
                                                         delta=d)})
    sides = [ReplaySide(label=x, path=x, sha256="0" * 64, task_hash=None, provenance=x,
                        excluded={}, missing=[]) for x in ("ref", label)]
    return CompareReport(task="t", correctness_label=EVIL, n=12, n_task=13, replays=sides,
                         arms=["constrained[s]"], arms_left_out={"x|y": [label]},
                         left_out=LeftOut(n=1, ids=[EVIL], reasons={EVIL: {label: "missing"}}),
                         task_hash="h", task_check=EVIL, bootstrap={"resamples": 100, "seed": 1},
                         test={}, comparisons=[ReplayComparison(
                             from_="ref", to=label, arms={"constrained[s]": arm})])


def test_hostile_strings_stay_inert() -> None:
    md = render_compare(_report(EVIL))
    prose = re.sub(r"(`+).*?\1", "", md)  # inside a code span, markup is shown, not run
    assert "<script>" not in prose and "\n# Owned" not in md
    rows = [ln for ln in md.splitlines() if ln.startswith("| `constrained[s]`")]
    assert len(rows) == 1 and rows[0].count(" | ") == 7  # eight cells, none split
    assert "-66.7 pts [-90.0, -30.0]" in rows[0] and "| 10 / 2 | p=0.039 | ±40.0 pts |" in rows[0]


def test_p_values_are_not_rounded_across_alpha() -> None:
    assert p_value(0.0499) == "p=0.0499" and p_value(0.0386) == "p=0.039"
    assert p_value(1.0) == "p=1" and p_value(0.5) == "p=0.5" and p_value(2e-5) == "p<0.001"


def test_written_whole(tmp_path: Path) -> None:
    r = _report("b")
    md = write_compare(r, tmp_path)
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == md
    back = CompareReport.model_validate(json.loads((tmp_path / "report.json").read_text()))
    assert back == r
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]
