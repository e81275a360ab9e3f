"""docs/performance.md's side-by-side block, from tests/benchmarks/side_by_side.json
(bench_side_by_side: this tree and a baseline revision measured in one run)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "side_by_side.json"


def _verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def side_by_side_table() -> str:
    """The measured cases as a table: both trees' median wall and largest peak RSS, the
    ratios and the verdicts (within the tolerance the benchmark holds them to)."""
    d = json.loads(DATA.read_text(encoding="utf-8"))
    m, pct = d["machine"], round(100 * d["tolerance"])
    head = (f"Measured {d['measured']} on {m['cores']} cores ({m['cpu']}, Python {m['python']}; "
            f"1-minute load average {m['load_1min']:.2f} before, {m['load_1min_after']:.2f} "
            f"after) by `python -m tests.benchmarks.bench_side_by_side --baseline "
            f"{d['baseline']}`: revision `{d['revision']}` and `{d['baseline']}` in one run, "
            f"alternating, {d['rounds']} rounds (the demo {d['startup_runs']} times per round); "
            f"median wall seconds, largest peak RSS; a figure is met within {pct}% of the "
            "baseline's:\n\n")
    rows = ["| what | wall (s) | baseline | ratio | verdict | peak RSS (MiB) | baseline | ratio "
            "| verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for r in d["rows"]:
        now, base = r["this"], r["baseline"]
        rows.append(f"| {r['case']} | {now['median_wall_s']:.2f} | {base['median_wall_s']:.2f} | "
                    f"{r['ratio_wall_s']:.2f} | {_verdict(r['met_wall_s'])} | "
                    f"{now['peak_rss_mib']:.0f} | {base['peak_rss_mib']:.0f} | "
                    f"{r['ratio_peak_rss_mib']:.2f} | {_verdict(r['met_peak_rss_mib'])} |")
    return head + "\n".join(rows)
