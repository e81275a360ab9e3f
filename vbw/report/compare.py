"""mode=compare's report.md and report.json (written by vbw.report.writers): one table
per replay pair, every arm and metric a row. Labels, paths, ids and reasons come from
files vbw did not write, so they are escaped like every other report string
(vbw.report.escape)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from vbw.report.cost import cost_side_by_side
from vbw.report.escape import code, text
from vbw.report.files import MANIFEST
from vbw.report.interventions import side_by_side
from vbw.report.markdown import metric_name
from vbw.report.numbers import pct
from vbw.report.numbers import pts
from vbw.report.verdict import mde_text, p_value, verdict
from vbw.report.writers import Writer, files_written, write_outputs, written_line
from vbw.score.compare import ArmPair, CompareReport, MetricPair, ReplayComparison
from vbw.score.results import Delta
from vbw.score.paired import ALPHA, POWER

_SHOWN_IDS = 5


def _delta_cell(m: MetricPair) -> str:
    """The verdict (vbw.report.verdict, as in report.md) with the CI of the size; p and
    the MDE have their own columns. On fractions of k samples: the effect, or the
    observed change, and the CI."""
    d = m.delta
    if isinstance(d, Delta):
        return verdict(d, ci=True, stats=False)
    change = f"{pts(d.delta)} pts [{pts(d.ci95[0])}, {pts(d.ci95[1])}]"
    return change if d.effect else f"{change} observed; not distinguishable from zero"


def _mde_cell(m: MetricPair) -> str:
    if not isinstance(m.delta, Delta):
        return "n/a (k samples)"
    return mde_text(m.delta).removeprefix("MDE ")


def _counts(m: MetricPair) -> str:
    """A only / B only, or on k samples the items where B holds fewer / more samples."""
    d = m.delta
    return f"{d.n10} / {d.n01}" if isinstance(d, Delta) else f"{d.fewer} / {d.more}"


def _p(m: MetricPair) -> str:
    d = m.delta
    return p_value(d.mcnemar_p) if isinstance(d, Delta) else f"{p_value(d.p)} (sign-flip)"


def _table(c: ReplayComparison, label: str) -> list[str]:
    out = ["| arm | metric | A | B | Δ B − A [95% CI] | A only / B only | McNemar | MDE |",
           "|---|---|---|---|---|---|---|---|"]
    for arm, pair in c.arms.items():
        for metric, m in pair.metrics.items():
            out.append(f"| {code(arm, in_table=True)} | {metric_name(metric, label)} | "
                       f"{pct(m.rate_from)} | {pct(m.rate_to)} | {_delta_cell(m)} | "
                       f"{_counts(m)} | {_p(m)} | {_mde_cell(m)} |")
    return out


def _field_table(c: ReplayComparison) -> list[str]:
    """Per arm and field, A against B (none when the task has no fields)."""
    rows = [(arm, name, m) for arm, pair in c.arms.items() for name, m in pair.fields.items()]
    if not rows:
        return []
    same = len(rows)
    rows = [r for r in rows if r[2].delta.n10 + r[2].delta.n01]
    same -= len(rows)
    note = f" {same} arm-field pairs with no item read differently are left out here" \
        " (report.json has every one)." if same else ""
    if not rows:
        return ["", "Per field: every field of every arm is right on the same items in both "
                "replays (report.json has each figure)."]
    out = ["", "Per field (accuracy over the paired items that have the field):" + note, "",
           "| arm | field | A | B | Δ B − A [95% CI] | A only / B only | McNemar | MDE |",
           "|---|---|---|---|---|---|---|---|"]
    for arm, name, m in rows:
        out.append(f"| {code(arm, in_table=True)} | {text(name)} | {pct(m.rate_from)} | "
                   f"{pct(m.rate_to)} | {_delta_cell(m)} | {m.delta.n10} / {m.delta.n01} | "
                   f"{p_value(m.delta.mcnemar_p)} | {_mde_cell(m)} |")
    return out


def _identical(arms: dict[str, ArmPair], n: int) -> str:
    shares = ", ".join(f"{code(k)} {a.identical} of {n} ({pct(a.identical_share)})"
                       for k, a in arms.items())
    return f"Byte-identical generations: {shares}."


def _why(where: dict[str, str]) -> str:
    """`excluded in X, missing from Y`: the engine's long reason stays in report.json."""
    return ", ".join(f"{'missing from' if v == 'missing' else 'excluded in'} {code(k)}"
                     for k, v in where.items())


def _header(r: CompareReport) -> list[str]:
    out = [f"# vbw compare: {text(r.task)} (N={r.n} paired items, {len(r.replays)} replays)",
           ""]
    for i, s in enumerate(r.replays):
        role = "reference" if i == 0 else "compared to the reference"
        k = f"; {s.samples} samples per item and arm" if s.samples > 1 else ""
        out.append(f"- {code(s.label)} ({role}): {code(s.path)}, {text(s.provenance)}{k}")
    if any(s.samples > 1 for s in r.replays):
        out += ["", "With k samples per item, a rate is the mean over items of each item's "
                "fraction of samples that hold the metric; Δ pairs those fractions item by "
                "item (the sign-flip permutation test, an effect at p<0.05; CI: a bootstrap "
                "over items); A only / B only count the items where B's fraction is lower / "
                "higher. Per-field rows and interventions are sample 1's."]
    out.append("")
    left = r.left_out
    shown = ", ".join(f"{code(i)} ({_why(left.reasons[i])})" for i in left.ids[:_SHOWN_IDS])
    more = f", +{left.n - _SHOWN_IDS} more" if left.n > _SHOWN_IDS else ""
    out.append(f"{r.n} paired of {r.n_task} in the task"
               + (f"; {left.n} left out (not scored in every replay; why: report.json "
                  f"`left_out`): {shown}{more}." if left.n else "; none left out."))
    out.append(f"Task version: {text(r.task_check)}")
    if r.arms_left_out:
        out.append("Arms not in every replay, not compared: " + "; ".join(
            f"{code(k)} (only in {', '.join(code(x) for x in v)})"
            for k, v in r.arms_left_out.items()) + ".")
    return out


def render_compare(r: CompareReport) -> str:
    out = _header(r)
    for c in r.comparisons:
        out += ["", f"## A = {code(c.from_)}, B = {code(c.to)}", ""]
        out += _table(c, r.correctness_label)
        out += _field_table(c)
        out += ["", _identical(c.arms, r.n)]
    out += side_by_side(r.interventions, "compared replay", "replay")
    out += cost_side_by_side(r.cost)
    out += ["", f"Rates over the N paired items. Δ is B − A with its paired 95% bootstrap "
            f"CI ({r.bootstrap['resamples']} resamples, seed {r.bootstrap['seed']}); "
            "\"A only / B only\": items where the metric holds in one replay only. "
            f"McNemar: the exact two-sided test on those items; an effect is reported "
            f"when p<{ALPHA:g}, otherwise the observed change and \"not distinguishable "
            f"from zero\". MDE: the smallest |Δ| that test detects with "
            f"{100 * POWER:.0f}% power at this N and this number of discordant items "
            f"(none: too few of them for any split to reach p<{ALPHA:g})."]
    return "\n".join(out) + "\n"


COMPARE_WRITERS: dict[str, Writer[CompareReport]] = {  # see vbw.report.writers
    "json": Writer(MANIFEST, lambda r: r.model_dump_json(by_alias=True, indent=1) + "\n"),
    "md": Writer("report.md", render_compare),
}


def write_compare(r: CompareReport, out_dir: Path,
                  outputs: Collection[str] | None = None) -> str:
    """report.md and report.json (`outputs`: which; report.json always, and last),
    atomically; returns the markdown."""
    written = write_outputs(out_dir, COMPARE_WRITERS, r, outputs)
    return written.get("report.md") or render_compare(r)


def compare_written(out_dir: Path, outputs: Collection[str] | None = None) -> str:
    """The comparison's closing line: the files write_compare wrote into `out_dir`."""
    return written_line("Reports", out_dir, files_written(out_dir, COMPARE_WRITERS, outputs))
