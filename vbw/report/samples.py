"""k samples per item in report.md and report.html: the per-arm table (mean accuracy,
pass@k', majority vote, all-k, validity, wrong-but-valid, tax) and the paired
comparisons on per-item fractions, each with the one verdict (an effect is p < ALPHA).
Cells are plain text, escaped by each renderer; a one-sample report has no section.
"""

from __future__ import annotations

from typing import Any

from vbw.report.escape import code, text
from vbw.report.numbers import pct, pts, rate_cell
from vbw.report.verdict import p_value
from vbw.score.paired import ALPHA
from vbw.score.results import Report, Sampled, SampledDelta

_TESTS = {"mcnemar": "McNemar", "exact": "exact sign-flip", "monte_carlo": "Monte Carlo sign-flip"}
_METRICS = {"schema_validity": "schema validity", "wrong_but_valid": "wrong but valid"}


def title(s: Sampled) -> str:
    return f"{s.k} samples per item and arm"


def legend(s: Sampled) -> str:
    return (f"Every rate is over all N items, each item counting as the fraction of its "
            f"{s.k} samples (95% CI: a bootstrap over items that keeps each item's samples "
            f"together). pass@j: the chance that at least one of j samples drawn from the "
            f"{s.k} is right (the unbiased estimator of Chen et al. 2021). Majority: the "
            f"answer most samples gave is right (ties go to the answer sampled first; "
            f"tied items counted). All {s.k}: every sample right. Tax: the grammar's mean "
            "nats per sample. Comparisons pair each item's fractions: the sign-flip "
            "permutation test on the per-item differences (exact, or Monte Carlo on large N; "
            "McNemar's test where every differing item differs by the same amount); per "
            "item: up = more of `to`'s samples hold the metric, down = fewer. The sections "
            "after this one are sample 1's, as a one-sample run reports them.")


def head(s: Sampled, label: str) -> list[str]:
    passes = [f"pass@{j}" for j in range(2, s.k + 1)]
    return [f"{label} (mean)", *passes, "majority (tied)", f"all {s.k}", "schema validity",
            "wrong-but-valid", "tax (nats)"]


def _tax(t: Any) -> str:
    return "n/a" if t is None or t.all.mean is None else f"{t.all.mean:.2f}"


def rows(s: Sampled) -> list[tuple[str, list[str]]]:
    """Per arm: its key and the `head` cells."""
    out = []
    for key, a in s.arms.items():
        passes = [pct(a.pass_at[str(j)].rate) for j in range(2, s.k + 1)]
        out.append((key, [rate_cell(a.accuracy), *passes,
                          f"{rate_cell(a.majority)} ({a.majority_tied})",
                          rate_cell(a.all_right), rate_cell(a.schema_validity),
                          rate_cell(a.wrong_but_valid), _tax(a.tax)]))
    return out


def verdict(d: SampledDelta, n: int) -> str:
    """`+5.5 pts (p=0.0034, exact sign-flip permutation test)`, or the observed change
    first and that it is not distinguishable from zero at this N."""
    how = f"{p_value(d.p)}, {_TESTS[d.test]}"
    if d.effect:
        return f"{pts(d.delta)} pts ({how})"
    return f"{pts(d.delta)} pts observed; not distinguishable from zero at N={n} ({how})"


def comparison_lines(s: Sampled, label: str) -> list[tuple[str, str, str, list[str]]]:
    """Per comparison: from, to, role, and one line per metric (`label` names accuracy,
    as given: escaped by the caller)."""
    out = []
    for c in s.comparisons:
        lines = []
        for m, d in c.deltas.items():
            name = label if m == "answer_accuracy" else _METRICS[m]
            lines.append(f"{name}: {verdict(d, c.n)}; 95% CI [{pts(d.ci95[0])}, "
                         f"{pts(d.ci95[1])}] pts; per item {d.more} up, {d.fewer} down")
        out.append((c.from_, c.to, c.role, lines))
    return out


def markdown_lines(r: Report) -> list[str]:
    """report.md's section (with a leading blank line), or none."""
    s = r.samples
    if s is None:
        return []
    label = text(r.correctness_label)
    cols = head(s, label)
    out = ["", f"## {title(s)}", "", legend(s), "",
           "| arm | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    # the cells are vbw's numbers, written as the other tables write theirs
    out += ["| " + " | ".join([code(k, in_table=True), *cells]) + " |" for k, cells in rows(s)]
    if s.comparisons:
        out += ["", f"Paired comparisons on per-item fractions (an effect is p<{ALPHA:g}):", ""]
        for src, dst, role, lines in comparison_lines(s, label):
            out += [f"**{code(src)} → {code(dst)}** ({role})", *(f"- {line}" for line in lines),
                    ""]
    return out


def html_view(r: Report) -> dict[str, Any] | None:
    """report.html's section (plain text, escaped by Jinja), or None."""
    s = r.samples
    if s is None:
        return None
    return {"title": title(s), "legend": legend(s), "head": head(s, r.correctness_label),
            "arms": rows(s), "comparisons": comparison_lines(s, r.correctness_label)}
