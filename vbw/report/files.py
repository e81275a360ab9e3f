"""Write one task's report files: report.json, report.md, quadrants.svg, ledger.csv."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from vbw.report.markdown import render_markdown
from vbw.report.svg import render_svg
from vbw.score.model import Report


def ledger_csv(r: Report) -> str:
    buf = io.StringIO()
    arms = list(r.arms)
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", *arms])
    for row in r.ledger:
        w.writerow([row["id"], *(row[a] for a in arms)])
    return buf.getvalue()


def write_reports(r: Report, out_dir: Path) -> str:
    """Write the four files into out_dir; return the markdown (also printed by the CLI)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = render_markdown(r)
    (out_dir / "report.json").write_text(r.model_dump_json(by_alias=True, indent=1) + "\n",
                                         encoding="utf-8")
    (out_dir / "report.md").write_text(md, encoding="utf-8")
    (out_dir / "quadrants.svg").write_text(render_svg(r), encoding="utf-8")
    (out_dir / "ledger.csv").write_text(ledger_csv(r), encoding="utf-8")
    return md
