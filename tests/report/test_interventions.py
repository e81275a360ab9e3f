"""The interventions section of report.md and report.html: numbers, "not recorded" in one
line, escaping; and the side-by-side table of compare and sweep."""

from __future__ import annotations

from vbw.report.html import render_html
from vbw.report.interventions import markdown_lines, side_by_side
from vbw.report.markdown import render_markdown
from vbw.score.results import (ArmInterventions, Excluded, FlipInterventions,
                             InterventionCounts, Missing, Report)

KEY = "constrained[ans|wer]"


def _counts(items: int, hit: int, total: int, value: int,
            answer: int | None, changed: int | None = None) -> InterventionCounts:
    return InterventionCounts(items=items, with_interventions=hit, interventions=total,
                              per_item=total / items if items else 0.0, in_value=value,
                              in_answer=answer, answer_items=changed,
                              value_share=value / total if total else None,
                              answer_share=answer / total if total and answer is not None
                              else None)


def _report(iv: dict[str, ArmInterventions]) -> Report:
    return Report.model_construct(
        task="t", correctness_label="acc", n=4, n_task=4, mode="replay",
        excluded=Excluded(n=0, ids=[], reason=""), missing=Missing(n=0, ids=[]),
        coverage="", meta={}, source="s", provenance="p", bootstrap={}, task_check=None,
        arms={}, comparisons=[], interventions=iv, ledger=[])


RECORDED = ArmInterventions(
    recorded=True, not_recorded=1, all=_counts(3, 2, 4, 2, 1, 1),
    by_outcome={"right": _counts(1, 1, 1, 0, 0, 0),
                "wrong_but_valid": _counts(2, 1, 3, 2, 1, 1),
                "invalid": _counts(0, 0, 0, 0, 0, 0)},
    flips=[FlipInterventions(from_="prompt_json[ans|wer]", to=KEY, right_to_wrong=3,
                             answer_value=1, structure_only=1, elsewhere=0, none=1,
                             not_recorded=0)])


def test_recorded_section_in_markdown() -> None:
    md = "\n".join(markdown_lines(_report({KEY: RECORDED})))
    assert "| `constrained[ans\\|wer]` | 2 of 3 (66.7%); 1 item(s) not recorded | 1.33 | " \
           "50.0% | 25.0% |" in md
    assert "| `constrained[ans\\|wer]` | wrong but valid | 1 of 2 (50.0%) | 1.50 | 66.7% | " \
           "33.3% |" in md
    assert "| invalid | 0 of 0 | 0.00 | n/a | n/a |" in md
    assert ("- `prompt_json[ans|wer]` → `constrained[ans|wer]`: 3 right→wrong: 1 with an "
            "intervention in the answer value (the grammar changed the answer itself), 1 in "
            "structure only, 0 elsewhere (keys, other values), 1 with none") in md


def test_first_line_per_arm_counts_the_answers_the_grammar_changed() -> None:
    """Before the table: per arm, on how many items the grammar changed the extracted
    answer, by outcome; then a legend saying what each column is a share of."""
    lines = markdown_lines(_report({KEY: RECORDED}))
    first = lines.index("Answers the grammar changed (items with an intervention inside the "
                        "answer), by outcome:")
    assert lines[first + 2] == ("- `constrained[ans|wer]`: the grammar changed the extracted "
                                "answer on 1 of 3 items (0 valid, right; 1 wrong but valid; "
                                "0 invalid)")
    table = next(i for i, x in enumerate(lines) if x.startswith("| arm |"))
    assert first < table
    assert lines[table] == ("| arm | items with any (share of scored items) | interventions "
                            "per item | in values (share of interventions) | in the answer "
                            "(share of interventions, its member names included) |")
    legend = lines[table - 2]
    assert legend.startswith("An intervention is one output token where the grammar refused")
    assert "shares are of the arm's interventions (not of items, outputs or tokens)" in legend
    unknown = RECORDED.model_copy(update={"all": _counts(3, 2, 4, 2, None, None)})
    assert ("- `constrained[ans|wer]`: where the extracted answer lies is unknown (path not "
            "locatable)") in markdown_lines(_report({KEY: unknown}))


def test_not_recorded_is_one_line_and_nothing_without_enforced_arms() -> None:
    lines = markdown_lines(_report({KEY: ArmInterventions(recorded=False, not_recorded=4)}))
    assert lines == ["", "Constraint interventions: not recorded in this replay (its records "
                         "have no interventions field): `constrained[ans|wer]`."]
    assert markdown_lines(_report({})) == []


def test_unknown_answer_path_says_so() -> None:
    iv = RECORDED.model_copy(update={"all": _counts(3, 2, 4, 2, None)})
    assert "unknown (path not locatable)" in "\n".join(markdown_lines(_report({KEY: iv})))


def test_html_section_escapes_and_markdown_keeps_its_place() -> None:
    evil = "constrained[<img src=x onerror=alert(1)>]"
    r = _report({evil: RECORDED})
    page = render_html(r, "<svg></svg>", None)
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'id="interventions"' in page and "the grammar changed the answer itself" in page
    assert ("<li>constrained[&lt;img src=x onerror=alert(1)&gt;]: the grammar changed the "
            "extracted answer on 1 of 3 items (0 valid, right; 1 wrong but valid; 0 invalid)"
            "</li>") in page
    assert "<th>in values (share of interventions)</th>" in page
    md = render_markdown(r)
    assert f"| `{evil}` |" in md  # a code span: inert, as every arm key in report.md
    assert md.index("CI widths") < md.index("## Constraint")
    quiet = render_html(_report({evil: ArmInterventions(recorded=False, not_recorded=4)}),
                        "<svg></svg>", None)
    assert "not recorded in this replay" in quiet and 'class="interventions"' not in quiet


def test_side_by_side() -> None:
    lines = side_by_side({"A": {KEY: RECORDED}, "B": {KEY: ArmInterventions(
        recorded=False, not_recorded=3)}}, "compared replay", "replay")
    assert "| `constrained[ans\\|wer]` | `A` | 2 of 3 (66.7%) | 1.33 | 50.0% | 25.0% |" in lines
    assert "| `constrained[ans\\|wer]` | `B` | not recorded |  |  |  |" in lines
    none = side_by_side({"A": {KEY: ArmInterventions(recorded=False, not_recorded=3)}},
                        "compared replay", "replay")
    assert none == ["", "Constraint interventions: not recorded in any compared replay (no "
                        "record has an interventions field)."]
    assert side_by_side({"A": {}}, "compared replay", "replay") == []
