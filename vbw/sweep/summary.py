"""The sweep summary: one row per job (per task it scored), in summary.md/.json/.html.

A row holds the job's overrides (task, model and engine apart), N, every arm's validity,
accuracy and wrong-but-valid rate with CIs, the accuracy delta of each headline comparison
(prompt_json[S] -> constrained[S], one per schema S: one column each, named by the
comparison, so a two-schema task's two deltas are never confused), where the report is and
how the job ended. A delta's verdict is report.md's (vbw.report.verdict: exact McNemar at
alpha 0.05, the CI beside it). Built from the files the jobs left (status.json,
report.json), so it is the same whichever launcher ran them; written atomically by
vbw.report.writers, summary.json last.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vbw.redact import redact_obj
from vbw.report.cost import cost_cells
from vbw.report.escape import code, text
from vbw.report.interventions import side_by_side
from vbw.report.writers import Writer, files_written, write_outputs, written_line
from vbw.score.results import ArmInterventions, Report
from vbw.sweep.cells import (arm_cell, headline_cell, headline_columns, headline_note,
                             n_cell, status_cell)
from vbw.sweep.html import render_html
from vbw.sweep.outcome import SUMMARY
from vbw.sweep.status import JobStatus

_PLAIN = ("task", "model", "engine")


def _other(overrides: list[str]) -> list[str]:
    return [o for o in overrides if o.split("=", 1)[0].lstrip("+~") not in _PLAIN]


def _rate(r: Any) -> dict[str, Any] | None:
    return None if r is None else {"rate": r.rate, "ci95": list(r.ci95)}


def _headlines(r: Report) -> list[dict[str, Any]]:
    """Every headline comparison's accuracy delta, with the verdict and what decides it
    (with k samples: on per-item fractions, vbw.score.samples)."""
    out = []
    for c in (r.samples.comparisons if r.samples is not None else r.comparisons):
        if c.kind != "headline":
            continue
        d = c.deltas["answer_accuracy"]
        out.append({"from": c.from_, "to": c.to, "metric": r.correctness_label,
                    **d.model_dump(mode="json")})
    return out


def _arms(r: Report) -> dict[str, dict[str, Any]]:
    """Per arm its rates: over k samples, the mean fractions (and majority and pass@k)."""
    if r.samples is None:
        return {k: {"schema_validity": _rate(m.schema_validity),
                    "answer_accuracy": _rate(m.answer_accuracy),
                    "wrong_but_valid": _rate(m.wrong_but_valid)} for k, m in r.arms.items()}
    top = str(r.samples.k)
    return {k: {"schema_validity": _rate(a.schema_validity),
                "answer_accuracy": _rate(a.accuracy),
                "wrong_but_valid": _rate(a.wrong_but_valid),
                "majority": _rate(a.majority), f"pass_at_{top}": _rate(a.pass_at[top])}
            for k, a in r.samples.arms.items()}


def _load(path: Path) -> Report | None:
    try:
        return Report.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def _if_written(folder: Path, where: Path, file: str) -> str | None:
    """`where/file` if the job wrote `file` into `folder` (its `outputs` may leave it out),
    else None: the summary links only files that are there."""
    return str(where / file) if (folder / file).is_file() else None


def job_rows(job_dir: Path, sweep_dir: Path, status: JobStatus) -> list[dict[str, Any]]:
    """The rows of one job: one per report it wrote, or one saying why there is none."""
    rel = job_dir.relative_to(sweep_dir)
    base = {"job": status.job, "num": status.num, "folder": str(rel),
            "overrides": status.overrides, "other_overrides": _other(status.overrides),
            "model": status.model, "engine": status.engine, "shard": status.shard,
            "exit_code": status.exit_code, "reason": status.reason}
    rows = []
    inside = job_dir.resolve()
    for name in status.reports:
        path = job_dir / name
        if not path.resolve().is_relative_to(inside):  # a link out of the job's folder
            continue
        r = _load(path)
        if r is None:
            continue
        where = rel / Path(name).parent
        rows.append({**base, "task": r.task, "n": r.n, "n_task": r.n_task,
                     "correctness_label": r.correctness_label,
                     "samples": r.samples.k if r.samples is not None else 1,
                     "arms": _arms(r),
                     "headlines": _headlines(r),
                     "interventions": {k: a.model_dump(mode="json", by_alias=True)
                                       for k, a in r.interventions.items()},
                     "cost": {k: c.model_dump(mode="json") for k, c in r.cost.items()},
                     "report": _if_written(path.parent, where, "report.md"),
                     "report_json": str(where / name.split("/")[-1]),
                     "report_html": _if_written(path.parent, where, "report.html")})
    if not rows:
        task = status.inputs.get("task_choice") if status.inputs else None
        rows.append({**base, "task": task, "n": None, "n_task": None, "correctness_label": None,
                     "samples": None,
                     "arms": {}, "headlines": [], "report": None, "report_json": None,
                     "report_html": None})
    return rows


def render_markdown(sweep_dir: Path, rows: list[dict[str, Any]], exit_code: int) -> str:
    columns = headline_columns(rows)
    heads = "".join(f"Δ accuracy {code(c, in_table=True)} | " for c in columns)
    out = [f"# vbw sweep: {len(rows)} row(s), exit {exit_code}", "",
           f"Sweep folder: {code(str(sweep_dir))}", "",
           f"| job | task | model | engine | other overrides | N | {heads}status | report |",
           "|---" * (8 + len(columns)) + "|"]
    for row in rows:
        other = " ".join(row["other_overrides"])
        out.append(" | ".join([
            f"| {text(row['job'])}", text(row["task"] or "?"), text(row["model"] or "?"),
            text(row["engine"] or "?"), code(other, in_table=True) if other else "",
            n_cell(row),
            *(headline_cell(row, c) for c in columns), text(status_cell(row)),
            code(row["report"], in_table=True) if row["report"] else "-"]) + " |")
    if columns:
        out += ["", headline_note()]
    for row in rows:
        if not row["arms"]:
            continue
        mean = f" (mean over {row['samples']} samples per item)" \
            if (row.get("samples") or 1) > 1 else ""
        out += ["", f"## {text(row['job'])}: {text(' '.join(row['overrides']))}{mean}", "",
                f"| arm | schema validity | {text(row['correctness_label'])} | "
                "wrong-but-valid | output tokens / answer | s / item |", "|---" * 6 + "|"]
        for key, m in row["arms"].items():
            tokens, seconds = cost_cells(row.get("cost", {}).get(key))
            out.append(f"| {code(key, in_table=True)} | {arm_cell(m['schema_validity'])} | "
                       f"{arm_cell(m['answer_accuracy'])} | {arm_cell(m['wrong_but_valid'])} | "
                       f"{text(tokens)} | {text(seconds)} |")
    out += side_by_side(interventions(rows), "job's report", "job")
    return "\n".join(out) + "\n"


def interventions(rows: list[dict[str, Any]]) -> dict[str, dict[str, ArmInterventions]]:
    """Per row with a report ("job task"), its enforced arms' intervention summaries."""
    return {f"{row['job']} {row['task']}": {k: ArmInterventions.model_validate(a)
                                           for k, a in row["interventions"].items()}
            for row in rows if row.get("interventions")}


@dataclass(frozen=True)
class SummarySet:
    """What the summary's writers render (rows already redacted)."""

    sweep_dir: Path
    rows: list[dict[str, Any]]
    exit_code: int


def _json(s: SummarySet) -> str:
    data = {"sweep_dir": str(s.sweep_dir), "exit_code": s.exit_code, "rows": s.rows}
    return json.dumps(data, indent=1) + "\n"


SUMMARY_WRITERS: dict[str, Writer[SummarySet]] = {  # see vbw.report.writers
    "json": Writer(SUMMARY, _json),
    "md": Writer("summary.md", lambda s: render_markdown(s.sweep_dir, s.rows, s.exit_code)),
    "html": Writer("summary.html", lambda s: render_html(s.sweep_dir, s.rows, s.exit_code)),
}


def write_summary(sweep_dir: Path, rows: list[dict[str, Any]], exit_code: int,
                  outputs: Collection[str] | None = None) -> str:
    """summary.md and summary.html (`outputs`: which), then summary.json, the manifest the
    sweep's exit code is read from (vbw.sweep.outcome), all atomically; return the
    markdown."""
    s = SummarySet(sweep_dir, redact_obj(rows), exit_code)  # no URL credentials (vbw.redact)
    written = write_outputs(sweep_dir, SUMMARY_WRITERS, s, outputs)
    return written.get("summary.md") or SUMMARY_WRITERS["md"].render(s)


def summary_written(sweep_dir: Path, outputs: Collection[str] | None = None) -> str:
    """The sweep's closing line: the summary files write_summary wrote (only those)."""
    return written_line("Sweep summary", sweep_dir,
                        files_written(sweep_dir, SUMMARY_WRITERS, outputs))
