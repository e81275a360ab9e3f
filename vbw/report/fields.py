"""The fields section of report.md and report.html: a field x arm table of accuracy and of
wrong-but-valid, then each field's headline comparisons (vbw.score.fields), worded by
vbw.report.verdict as every other comparison is. Plain text here; each renderer escapes."""

from __future__ import annotations

from typing import Any, NamedTuple

from vbw.report.escape import code, text
from vbw.report.numbers import rate_cell
from vbw.report.verdict import verdict
from vbw.score.results import FieldMetrics, Report
from vbw.task.fields import ALL_FIELDS

TITLE = "Fields"
WHAT = "accuracy per field and arm over the items that have the field, 95% bootstrap CI"
WBV = ("Wrong-but-valid by field: the arm's output is schema-valid and this field is "
       "wrong (over the same items).")


class Headline(NamedTuple):
    """One field's headline comparison: the verdict on its accuracy and the flips."""

    field: str
    pair: tuple[str, str]
    verdict: str
    flips: str

    def line(self) -> str:
        return f"{self.field}: {self.pair[0]} → {self.pair[1]}: {self.verdict}; {self.flips}"


class FieldTable(NamedTuple):
    """What both renderers show: plain text cells, one row per field."""

    note: str
    arms: list[str]
    accuracy: list[list[str]]      # [field, N, cell per arm]
    wrong_valid: list[list[str]]   # [field, N, cell per contract arm]
    contract_arms: list[str]
    headline: list[Headline]       # per field, its headline comparisons


def _note(r: Report) -> str:
    derived = (f"'{ALL_FIELDS}': every field the item has is right in the same output.")
    read = sorted({k for f in r.fields.values() for k in f.not_read})
    na = (f" n/a: the arm cannot state the field (free text, and the task gives the field "
          f"no free-text steps): {', '.join(read)}." if read else "")
    return f"Fields: {r.fields_from}. {derived}{na}"


def _cell(f: FieldMetrics, arm: str, wrong_valid: bool = False) -> str:
    m = f.arms.get(arm)
    if m is None:
        return "n/a"
    return rate_cell(m.wrong_but_valid if wrong_valid else m.accuracy)


def field_table(r: Report) -> FieldTable | None:
    """The section's contents; None when the report has no fields."""
    if not r.fields:
        return None
    arms = list(r.arms)
    contract = [k for k, m in r.arms.items() if m.schema_validity is not None]
    acc = [[name, str(f.n), *(_cell(f, a) for a in arms)] for name, f in r.fields.items()]
    wv = [[name, str(f.n), *(_cell(f, a, True) for a in contract)]
          for name, f in r.fields.items()]
    head = []
    for name, f in r.fields.items():
        for c in f.comparisons:
            if c.kind != "headline":
                continue
            head.append(Headline(name, (c.from_, c.to), verdict(c.deltas["accuracy"], f.n),
                                 f"flips {c.flips.right_to_wrong} right→wrong, "
                                 f"{c.flips.wrong_to_right} wrong→right"))
    return FieldTable(_note(r), arms, acc, wv, contract, head)


def markdown_lines(r: Report) -> list[str]:
    """report.md's fields section ([] without fields)."""
    t = field_table(r)
    if t is None:
        return []
    out = ["", f"## {TITLE} ({WHAT})", "", text(t.note), "",
           "| field | N | " + " | ".join(code(a, in_table=True) for a in t.arms) + " |",
           "|---|---|" + "---|" * len(t.arms)]
    out += [f"| {text(row[0])} | " + " | ".join(row[1:]) + " |" for row in t.accuracy]
    if t.contract_arms:
        out += ["", text(WBV), "",
                "| field | N | " + " | ".join(code(a, in_table=True) for a in t.contract_arms)
                + " |", "|---|---|" + "---|" * len(t.contract_arms)]
        out += [f"| {text(row[0])} | " + " | ".join(row[1:]) + " |" for row in t.wrong_valid]
    if t.headline:
        out += ["", "Headline comparisons per field (accuracy; every comparison, with "
                "wrong-but-valid, is in report.json's `fields`):", ""]
        out += [f"- {text(h.field)}: {code(h.pair[0])} → {code(h.pair[1])}: {h.verdict}; "
                f"{h.flips}" for h in t.headline]
    return out


def html_view(r: Report) -> dict[str, Any] | None:
    """report.html's fields section, for its template (None without fields)."""
    t = field_table(r)
    if t is None:
        return None
    return {"title": TITLE, "what": WHAT, "note": t.note, "arms": t.arms,
            "accuracy": t.accuracy, "contract_arms": t.contract_arms,
            "wrong_valid": t.wrong_valid, "wbv": WBV,
            "headline": [h.line() for h in t.headline]}
