"""The constraint's interventions in report.md and report.html: per enforced arm, first
on how many items the grammar changed the extracted answer (by outcome), then a legend
and the table of how often it refused the model's own token and where that landed, by
outcome, and what share of each headline comparison's right->wrong flips it changed the
answer itself.

The numbers are report.json's `interventions` (vbw.score.interventions). A report whose
arms recorded none says so in one line ("not recorded", never zero); a report without an
enforced arm says nothing. Rows are plain text here, escaped by each renderer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vbw.report.escape import code, text
from vbw.report.numbers import pct, ratio, share
from vbw.score.results import ArmInterventions, FlipInterventions, InterventionCounts, Report

TITLE = "Constraint interventions"
WHAT = ("steps where the arm's grammar refused the model's own most likely token; "
        "where the forced token landed in the final text")
NOT_RECORDED = "not recorded"
OUTCOME_NAMES = {"right": "valid, right", "wrong_but_valid": "wrong but valid",
                 "invalid": "invalid"}
FLIPS = ("Right→wrong flips of the headline comparisons, by the constrained arm's "
         "interventions on the item:")
HEAD = ("items with any (share of scored items)", "interventions per item",
        "in values (share of interventions)",
        "in the answer (share of interventions, its member names included)")
LEGEND = ("An intervention is one output token where the grammar refused the model's own most "
          "likely token and forced another, so the forced text differs from what the model "
          "wanted. \"Items with any\" counts the arm's scored items with at least one; "
          "\"interventions per item\" averages over those items; the two shares are of the "
          "arm's interventions (not of items, outputs or tokens): where the forced token "
          "landed in the final JSON: in a value (string, number or literal), and inside the "
          "text of the task's answer (at its answer path), member names included: where the "
          "answer is an object (a call's arguments) a forced member name changes it, so "
          "this share can exceed the values' share.")
CHANGED = ("Answers the grammar changed (items with an intervention inside the answer), "
           "by outcome:")


def recorded(r: Report) -> bool:
    return any(a.recorded for a in r.interventions.values())


def not_recorded_line(r: Report, name: Callable[[str], str] = str) -> str | None:
    """The one line of a report whose enforced arms recorded no interventions, else None;
    `name` spells an arm key (a code span in report.md)."""
    if not r.interventions or recorded(r):
        return None
    return (f"{TITLE}: {NOT_RECORDED} in this replay (its records have no interventions "
            "field): " + ", ".join(name(k) for k in r.interventions) + ".")


def cells(c: InterventionCounts | None) -> tuple[str, str, str, str]:
    """HEAD's cells for one group of items."""
    if c is None:
        return NOT_RECORDED, "", "", ""
    hit = f"{c.with_interventions} of {c.items}" + (
        f" ({pct(c.with_interventions / c.items)})" if c.items else "")
    answer = "unknown (path not locatable)" if c.in_answer is None else share(c.answer_share)
    return hit, ratio(c.per_item), share(c.value_share), answer


def arm_rows(r: Report) -> list[tuple[str, tuple[str, ...]]]:
    """(arm key, cells) per enforced arm, overall; unrecorded items noted in the first."""
    out = []
    for key, a in r.interventions.items():
        row = cells(a.all)
        if a.recorded and a.not_recorded:
            row = (f"{row[0]}; {a.not_recorded} item(s) {NOT_RECORDED}", *row[1:])
        out.append((key, row))
    return out


def outcome_rows(r: Report) -> list[tuple[str, str, tuple[str, ...]]]:
    """(arm key, outcome, cells) per recorded enforced arm and outcome."""
    return [(key, OUTCOME_NAMES[o], cells(c)) for key, a in r.interventions.items()
            if a.recorded for o, c in a.by_outcome.items()]


def flip_line(f: FlipInterventions, name: Callable[[str], str] = str,
              prose: Callable[[str], str] = str) -> str:
    """One comparison's right->wrong flips by where the grammar bit; `name` spells an arm
    key and `prose` the rest (report.md escapes both; HTML escapes the whole line)."""
    pair = f"{name(f.from_)} → {name(f.to)}: "
    if not f.right_to_wrong:
        return pair + prose("no right→wrong flip")
    parts = []
    if f.answer_value is not None:
        parts.append(f"{f.answer_value} with an intervention in the answer value (the "
                     "grammar changed the answer itself)")
    parts += [f"{f.structure_only} in structure only", f"{f.elsewhere} elsewhere"
              + (" (keys or values)" if f.answer_value is None else " (keys, other values)"),
              f"{f.none} with none"]
    if f.not_recorded:
        parts.append(f"{f.not_recorded} {NOT_RECORDED}")
    return pair + prose(f"{f.right_to_wrong} right→wrong: " + ", ".join(parts))


def flip_lines(r: Report, name: Callable[[str], str] = str,
               prose: Callable[[str], str] = str) -> list[str]:
    return [flip_line(f, name, prose) for a in r.interventions.values() if a.recorded
            for f in a.flips]


def changed_text(a: ArmInterventions) -> str:
    """`the grammar changed the extracted answer on K of N items (a valid, right; ...)`,
    N being the items that recorded interventions, split by outcome."""
    c = a.all
    if c is None:
        return f"interventions {NOT_RECORDED}"
    if c.answer_items is None:
        return "where the extracted answer lies is unknown (path not locatable)"
    split = "; ".join(f"{o.answer_items} {OUTCOME_NAMES[k]}" for k, o in a.by_outcome.items()
                      if o.answer_items is not None)
    return (f"the grammar changed the extracted answer on {c.answer_items} of {c.items} items"
            + (f" ({split})" if split else ""))


def changed_lines(r: Report, name: Callable[[str], str] = str,
                  prose: Callable[[str], str] = str) -> list[str]:
    """changed_text per recorded enforced arm, `name: text` (see flip_line for the two
    callables)."""
    return [f"{name(k)}: {prose(changed_text(a))}" for k, a in r.interventions.items()
            if a.recorded]


def summary_cells(a: ArmInterventions | None) -> tuple[str, str, str, str]:
    """One arm's overall cells for a side-by-side table (compare, sweep); None: the arm
    was not scored there."""
    if a is None:
        return "", "", "", ""
    return cells(a.all)


def _md_row(first: list[str], row: tuple[str, ...]) -> str:
    return "| " + " | ".join([*first, *(text(c) for c in row)]) + " |"


def markdown_lines(r: Report) -> list[str]:
    """report.md's lines (with a leading blank line), or none without an enforced arm."""
    line = not_recorded_line(r, code)
    if line is not None:
        return ["", line]
    if not r.interventions:
        return []
    out = ["", f"## {TITLE} ({WHAT})", "", CHANGED, ""]
    out += [f"- {line}" for line in changed_lines(r, code, text)]
    out += ["", LEGEND, "", "| arm | " + " | ".join(HEAD) + " |", "|---|---|---|---|---|"]
    out += [_md_row([code(k, in_table=True)], row) for k, row in arm_rows(r)]
    rows = outcome_rows(r)
    if rows:
        out += ["", "By outcome (valid, right; wrong but valid; invalid):", "",
                "| arm | outcome | " + " | ".join(HEAD) + " |", "|---|---|---|---|---|---|"]
        out += [_md_row([code(k, in_table=True), o], row) for k, o, row in rows]
    flips = flip_lines(r, code, text)
    if flips:
        out += ["", FLIPS, ""]
        out += [f"- {f}" for f in flips]
    return out


def html_view(r: Report) -> dict[str, Any] | None:
    """report.html's section (plain text, escaped by Jinja), or None: no enforced arm."""
    if not r.interventions:
        return None
    return {"title": TITLE, "what": WHAT, "head": HEAD, "missing": not_recorded_line(r),
            "changed_note": CHANGED, "changed": changed_lines(r), "legend": LEGEND,
            "arms": arm_rows(r), "outcomes": outcome_rows(r), "flips_note": FLIPS,
            "flips": flip_lines(r)}


def side_by_side(by_run: dict[str, dict[str, ArmInterventions]], runs: str,
                 column: str) -> list[str]:
    """report.md lines comparing runs (compared replays, sweep jobs) arm by arm: a row per
    (arm, run), or one line when no run recorded any; `runs` names them in that line,
    `column` in the table's header."""
    arms = list(dict.fromkeys(k for per in by_run.values() for k in per))
    if not arms:
        return []
    if not any(a.recorded for per in by_run.values() for a in per.values()):
        return ["", f"{TITLE}: {NOT_RECORDED} in any {runs} (no record has an "
                "interventions field)."]
    out = ["", f"## {TITLE} ({WHAT})", "", LEGEND, "",
           f"| arm | {column} | " + " | ".join(HEAD) + " |", "|---|---|---|---|---|---|"]
    for key in arms:
        for run, per in by_run.items():
            if key in per:
                row = cells(per[key].all)
                out.append(_md_row([code(key, in_table=True), code(run, in_table=True)], row))
    return out


def summary_text(a: ArmInterventions) -> str:
    """One arm's overall summary in one plain-text phrase (the sweep's HTML cell)."""
    if a.all is None:
        return f"interventions {NOT_RECORDED}"
    hit, per_item, values, answer = cells(a.all)
    return (f"{changed_text(a)}; interventions: {hit} items, {per_item} per item, {values} "
            f"of them in values, {answer} in the answer")
