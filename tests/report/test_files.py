"""The report files agree with the Report they render: JSON round-trips, the ledger
CSV is the ledger, the SVG is well-formed with one panel per contract arm whose cells are
the quadrant counts, and the Markdown states the exclusions."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.replay import read_replay
from vbw.report import ledger_csv, render_markdown, render_svg, write_reports
from vbw.report.markdown import coverage
from vbw.report.provenance import provenance
from vbw.score.metrics import build_report
from vbw.score.results import Excluded, Missing, Report
from vbw.replay.stream import open_replay
from vbw.score.stream import score_stream
from vbw.task.arms import task_arms
from vbw.task.runner import load_task

SVG = "{http://www.w3.org/2000/svg}"
KINDS = ["unconstrained", "prompt_json", "constrained", "reason_then_constrain"]


@pytest.fixture(scope="module")
def report() -> Report:
    """A real report with exclusions: SmolLM2 on llamacpp refuses three BFCL schemas."""
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    replay = read_replay(REPLAYS / "bfcl_simple/smollm2_135m/llamacpp.jsonl")
    path = REPLAYS / "bfcl_simple/smollm2_135m/llamacpp.jsonl"
    states = score_stream(task, open_replay(path),
                          task_arms(task.schema_names, task.spec.answer_schema, KINDS), 200,
                          io.StringIO()).states
    return build_report(states, task=task.name, label=task.spec.label, mode="replay",
                        meta=replay.meta_as_written, source=str(replay.path),
                        provenance=provenance(replay.header, [x.item_seconds for x in replay.records], replay.end),
                        seed=0, resamples=200,
                        n_task=200, missing=[])


def test_write_reports_writes_five_files_that_round_trip(report: Report, tmp_path: Path) -> None:
    md = write_reports(report, tmp_path / "out")
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["ledger.csv", "quadrants.svg", "report.html", "report.json", "report.md"]
    again = Report.model_validate_json((tmp_path / "out/report.json").read_text("utf-8"))
    assert again == report.model_copy(update={"coverage": coverage(report)})
    assert again.coverage.startswith("197 scored of 200 in the task")
    assert (tmp_path / "out/report.md").read_text("utf-8") == md


def test_ledger_csv_is_the_ledger(report: Report) -> None:
    rows = list(csv.reader(io.StringIO(ledger_csv(report))))
    assert rows[0] == ["id", *report.arms]
    assert len(rows) == 1 + report.n
    assert [dict(zip(rows[0], r)) for r in rows[1:]] == report.ledger


def test_svg_panels_hold_the_quadrant_counts(report: Report) -> None:
    root = ET.fromstring(render_svg(report))
    cells = [r.find(f"{SVG}title").text for r in root.iter(f"{SVG}rect")]  # type: ignore[union-attr]
    contract = [k for k, m in report.arms.items() if m.quadrant is not None]
    assert contract == [k for k in report.arms if k != "unconstrained"] and len(contract) == 3
    assert len(cells) == 4 * len(contract)
    for p, key in enumerate(contract):
        q = report.arms[key].quadrant.model_dump()  # type: ignore[union-attr]
        got = dict(c.split(": ") for c in cells[4 * p:4 * p + 4])
        assert {k: int(v) for k, v in got.items()} == q
        assert sum(q.values()) == report.n


def test_markdown_names_exclusions_and_every_arm(report: Report) -> None:
    md = render_markdown(report)
    assert report.excluded.n == 3
    assert ("197 scored of 200 in the task (3 excluded: simple_29, simple_49, simple_133; "
            "none missing from the replay).\nExcluded items are left out of every arm (the "
            "decoding backend could not compile the schema).") in md
    assert f"(N={report.n}, replay)" in md and report.n == 197
    for key in report.arms:
        assert f"| `{key}` |" in md


def test_accuracy_is_called_by_the_task_label_everywhere(report: Report) -> None:
    assert report.correctness_label == "AST-match accuracy"
    md = render_markdown(report)
    paired = md.split("## Fields", 1)[0]  # the fields' headlines are worded by field name
    bullets = [line for line in paired.splitlines() if line.startswith("- ") and "pts" in line]
    assert len(bullets) == len(report.comparisons) + 2  # + validity and wrong-but-valid
    assert "answer accuracy" not in md
    assert sum(b.startswith("- AST-match accuracy: ") for b in bullets) == len(report.comparisons)
    assert "| arm | schema validity | AST-match accuracy |" in md
    assert "validity × AST-match accuracy per arm" in render_svg(report)


def test_coverage_sentence_reads_well_in_every_case(report: Report) -> None:
    none = report.model_copy(update={"n": 200, "excluded": Excluded(n=0, ids=[], reason="r")})
    assert coverage(none) == "200 scored of 200 in the task (none excluded; none missing " \
                             "from the replay)."
    ids = [f"m{k}" for k in range(8)]
    gaps = report.model_copy(update={"n_task": 208, "missing": Missing(n=8, ids=ids)})
    assert coverage(gaps) == ("197 scored of 208 in the task (3 excluded: simple_29, "
                              "simple_49, simple_133; 8 missing from the replay: m0, m1, m2, "
                              "m3, m4, +3 more).")
    many = gaps.model_copy(update={"excluded": Excluded(n=6, ids=list("abcdef"), reason="r")})
    assert "(6 excluded: a, b, c, d, e, +1 more; 8 missing" in coverage(many)
    assert coverage(many) in render_markdown(many)


def test_ledger_csv_neutralises_formulas() -> None:
    """OWASP CSV injection: a cell a spreadsheet would run as a formula starts with a quote."""
    from tests.report.test_atomic import big_report

    r = big_report(8)
    hostile = ["=HYPERLINK(\"http://x\",\"y\")", "@SUM(1)", "-2+3", "+1", "\tx", "\rx", "ok=1",
               "a\rb"]
    for row, bad in zip(r.ledger, hostile):
        row["id"] = bad
    rows = list(csv.reader(io.StringIO(ledger_csv(r), newline="")))
    assert [x[0] for x in rows[1:]] == [f"'{h}" for h in hostile[:6]] + ["ok=1", "a\rb"]
    assert all(not c.startswith(("=", "+", "-", "@", "\t", "\r")) for x in rows for c in x)


def test_ledger_csv_neutralises_formulas_behind_whitespace_and_wide_forms() -> None:
    """Issue 30 item 15: a formula character after leading whitespace, or in its fullwidth
    or small form (or U+2212), is quoted too; whitespace before plain text, or a formula
    character after the first other one, is not."""
    from tests.report.test_atomic import big_report

    hostile = [" =1+1", "\u3000+1", "\n@SUM(1)", "＝1+1", "＋1", "－1", "＠SUM(1)",
               "﹦1", "\u22121", " \t -1"]
    harmless = [" ok", "a＝1", "\u3000x", "", "x-1"]
    r = big_report(len(hostile) + len(harmless))
    for row, value in zip(r.ledger, hostile + harmless):
        row["id"] = value
    rows = list(csv.reader(io.StringIO(ledger_csv(r), newline="")))
    assert [x[0] for x in rows[1:]] == [f"'{h}" for h in hostile] + harmless


def test_long_arm_keys_are_cut_in_their_panel_with_a_title() -> None:
    """Issue 17 item 10: a long schema name cannot overlap the next panel; the whole key
    stays in the label's <title>."""
    from tests.report.test_atomic import big_report
    from vbw.score.results import Quadrant

    r = big_report(4)
    key = "constrained[" + "s" * 200 + "]"
    arm = r.arms.pop("constrained[answer]")
    r.arms[key] = arm.model_copy(update={"quadrant": Quadrant(
        valid_right=1, valid_wrong=1, invalid_right=1, invalid_wrong=1)})
    root = ET.fromstring(render_svg(r))
    labels = [t for t in root.iter(f"{SVG}text") if t.find(f"{SVG}title") is not None
              and t.find(f"{SVG}title").text == key]
    assert len(labels) == 1
    shown = labels[0].text
    assert shown.endswith("…") and len(shown) <= 34
