"""report.md: the per-arm table and the paired comparisons, nulls printed as nulls. Each
comparison's verdict is vbw.report.verdict's, as in every other report."""

from __future__ import annotations

from vbw.report.escape import code, text
from vbw.report.interventions import markdown_lines
from vbw.report.samples import markdown_lines as sample_lines
from vbw.report.cost import markdown_lines as cost_lines
from vbw.report.tax import markdown_lines as tax_lines
from vbw.report.fields import markdown_lines as field_lines
from vbw.report.numbers import pct, rate_cell, size
from vbw.report.verdict import interval, mde_text, p_value, verdict
from vbw.score.results import Comparison, Report, TaskMismatch
from vbw.score.paired import ALPHA, POWER

__all__ = ["coverage", "mde_text", "metric_name", "p_value", "plain_metric_name", "pct",
           "rate_cell", "render_markdown"]

_NAMES = {"schema_validity": "schema validity", "wrong_but_valid": "wrong but valid"}


def metric_name(metric: str, label: str) -> str:
    """A metric's name in prose; accuracy is called by the task's label (e.g. "AST-match
    accuracy"), as in the table header, so the two never disagree."""
    return text(label) if metric == "answer_accuracy" else _NAMES[metric]


def plain_metric_name(metric: str, label: str) -> str:
    """metric_name's wording as plain text, for HTML and SVG (escaped there, not here)."""
    return label if metric == "answer_accuracy" else _NAMES[metric]


def _comparison(c: Comparison, n: int, label: str) -> list[str]:
    lines = [f"**{code(c.from_)} → {code(c.to)}** ({c.role})"]
    for metric, d in c.deltas.items():
        # the verdict is McNemar's (vbw.report.verdict); the CI is the change's size
        lines.append(f"- {metric_name(metric, label)}: {verdict(d, n)}; 95% CI "
                     f"{interval(d)} pts")
    lines.append(f"- per-item flips: {c.flips.right_to_wrong} right→wrong, "
                 f"{c.flips.wrong_to_right} wrong→right")
    return lines


def _first_ids(ids: list[str], shown: int = 5) -> str:
    more = f", +{len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(text(i) for i in ids[:shown]) + more


def coverage(r: Report) -> str:
    """One sentence, e.g. `197 scored of 200 in the task (3 excluded: a, b, c; none missing
    from the replay).` Every selected task item is one of the three; the first five ids
    of each are named here, all of them in report.json."""
    excluded = (f"{r.excluded.n} excluded: {_first_ids(r.excluded.ids)}" if r.excluded.n
                else "none excluded")
    missing = (f"{r.missing.n} missing from the replay: {_first_ids(r.missing.ids)}"
               if r.missing.n else "none missing from the replay")
    return f"{r.n} scored of {r.n_task} in the task ({excluded}; {missing})."


def mismatch_sentence(m: TaskMismatch) -> str:
    """What report.md says of a replay scored with allow_task_mismatch=true."""
    return (f"Task mismatch: the replay's task hash ({code(m.replay_task_hash[:12])}...) "
            f"differs from this task's ({code(m.task_hash[:12])}...), so its texts may have "
            "been generated from other prompts, schemas or data; scored anyway "
            "(allow_task_mismatch=true).")


def check_lines(r: Report) -> list[str]:
    """The task check's warnings, then the checks it skipped (plain text: each renderer
    escapes it); none when the checks found nothing, so such a report is unchanged."""
    tc = r.task_check
    if tc is None:
        return []
    return [f"warning: {w}" for w in tc.warnings] + [f"not checked: {n}" for n in tc.not_checked]


def render_markdown(r: Report) -> str:
    out = [f"# vbw report: {text(r.task)} (N={r.n}, {r.mode})", ""]
    how = ("Numbers are replayed, not regenerated." if r.mode == "replay"
           else "Generated in this run.")
    out.append(f"Scored from {code(r.source)}, {text(r.provenance)}. {how}")
    out.append(coverage(r))
    if r.task_mismatch is not None:
        out.append(mismatch_sentence(r.task_mismatch))
    if r.excluded.n:
        out.append(f"Excluded items are left out of every arm ({r.excluded.reason}).")
    out += sample_lines(r)
    first = "Sample 1: metrics" if r.samples is not None else "Metrics"
    out += ["", f"## {first} per arm (rate over all N items, 95% bootstrap CI)", "",
            f"| arm | schema validity | {text(r.correctness_label)} | wrong-but-valid |",
            "|---|---|---|---|"]
    for key, m in r.arms.items():
        out.append(f"| {code(key, in_table=True)} | {rate_cell(m.schema_validity)} | "
                   f"{rate_cell(m.answer_accuracy)} | {rate_cell(m.wrong_but_valid)} |")
    out += ["", "Executable accuracy: not computed (the task has no execution check).", ""]
    if r.comparisons:
        which = "Sample 1: paired" if r.samples is not None else "Paired"
        out += [f"## {which} comparisons (same items)", "",
                f"An effect is stated when the exact McNemar test on the discordant items "
                f"gives p<{ALPHA:g}; otherwise the observed change is stated first, then that "
                "it is not distinguishable from zero at this N, with p and the MDE (the "
                f"smallest change the test would detect {100 * POWER:.0f}% of the time). The "
                "95% bootstrap "
                "CI is the interval of the change's size.", ""]
        for c in r.comparisons:
            out += _comparison(c, r.n, r.correctness_label) + [""]
    widths = ", ".join(f"{code(k)} ±{size((m.answer_accuracy.ci95[1] - m.answer_accuracy.ci95[0]) / 2)} pts"
                       for k, m in r.arms.items())
    out.append(f"CI widths ({text(r.correctness_label)}): {widths}")
    out += field_lines(r)
    out += markdown_lines(r)
    out += tax_lines(r)
    out += cost_lines(r)
    checks = check_lines(r)
    if checks:
        out += ["", "## Task check (found on the scored items; scoring went ahead)", "",
                *(f"- {text(line)}" for line in checks)]
    return "\n".join(out) + "\n"
