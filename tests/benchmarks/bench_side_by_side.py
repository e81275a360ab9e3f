"""Benchmark: this tree against a baseline revision, side by side in one run, with verdicts.

    python -m tests.benchmarks.bench_side_by_side --baseline e8adc98   # -> side_by_side.json
    VBW_BENCH_AT=10000 VBW_BENCH_REPEATS=1 python -m tests.benchmarks.bench_side_by_side ...

The baseline is exported with `git archive` (bench_startup.export); both trees run as
`python -m vbw` (PYTHONPATH pointing at the tree, bytecode cached after a warm-up run) on
the same inputs, made once: bench_scoring's synthetic GSM8K-shaped replay of VBW_BENCH_AT
items (default 100,000) x 6 arms, a second replay of it whose texts disagree, and 4 shards
of a quarter each. Measured, REPEATS rounds (VBW_BENCH_REPEATS, default 5), the two trees
alternating within a round (the order swapped every round, so a busy spell weighs on both):
scoring the replay, `mode=compare` of the two replays, `mode=merge` of the shards, and the
start-up figure, the demo (`vbw` with no arguments in an empty folder; STARTUP_RUNS per
round). Each figure is the median wall time and the largest peak RSS; the verdict is met
when this tree's figure is at most (1 + TOLERANCE) times the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.benchmarks.bench_scoring import make_other, make_shards, make_synthetic
from tests.benchmarks.bench_startup import child_env, export, summary, timed

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "side_by_side.json"
REPEATS = int(os.environ.get("VBW_BENCH_REPEATS", "5"))
STARTUP_RUNS = 3  # demo runs per tree and round (it is short: more runs, a steadier median)
TOLERANCE = 0.10  # issue 31: within 10% of the baseline's figures
Args = Callable[[Path], list[str]]  # a run's folder -> its command line


def cases(work: Path, n: int) -> dict[str, Args]:
    """What is measured, by name: each a command line given the run's own output folder."""
    task, replay = make_synthetic(work, n)
    other = make_other(work, n)
    shards = make_shards(work, n, task, texts="qwen2_5_0_5b/outlines.jsonl")
    vbw = [sys.executable, "-m", "vbw"]
    return {
        f"scoring {n:,} items x 6 arms": lambda d: [*vbw, f"task.files=[{task}]",
                                                    f"replay={replay}", f"hydra.run.dir={d}"],
        f"compare of two {n:,}-item replays": lambda d: [
            *vbw, f"task.files=[{task}]", "mode=compare", f"replays=[{replay},{other}]",
            f"hydra.run.dir={d}"],
        f"merge of 4 shards of {n // 4:,} items": lambda d: [
            *vbw, f"task.files=[{task}]", "mode=merge", f"replays=[{shards}]",
            f"hydra.run.dir={d}"],
        "start-up: the demo, a fresh process": lambda d: [*vbw, f"hydra.run.dir={d}"],
    }


def measure(trees: dict[str, Path], work: Path, n: int) -> dict[str, dict[str, list[dict]]]:
    """Every case's runs per tree, alternating trees within each round."""
    made = cases(work, n)
    runs: dict[str, dict[str, list[dict]]] = {c: {t: [] for t in trees} for c in made}
    envs = {t: child_env(path, work / f"cache-{t}") for t, path in trees.items()}
    empty = work / "empty"
    empty.mkdir()
    for t in trees:  # warm-up: each tree's bytecode and schema cache, as a second run has it
        timed(made["start-up: the demo, a fresh process"](work / f"warm-{t}"), empty, envs[t])
    order = list(trees)
    for r in range(REPEATS):
        for case, args in made.items():
            cwd = empty if case.startswith("start-up") else work
            times = STARTUP_RUNS if case.startswith("start-up") else 1
            for t in (order if r % 2 == 0 else order[::-1]):
                for k in range(times):
                    run = timed(args(work / f"out-{t}-{r}-{k}-{len(runs[case][t])}"), cwd,
                                envs[t])
                    runs[case][t].append({k: run[k] for k in ("wall", "cpu", "rss_mib")})
            print(f"  round {r + 1}/{REPEATS}: {case}", file=sys.stderr)
    return runs


def verdicts(runs: dict[str, dict[str, list[dict]]]) -> list[dict]:
    """Per case: both trees' figures, this tree's ratios to the baseline's, and whether
    each is within the tolerance."""
    rows = []
    for case, per_tree in runs.items():
        now, base = summary(per_tree["this"]), summary(per_tree["baseline"])
        row = {"case": case, "this": now, "baseline": base}
        for what, figure in (("wall_s", "median_wall_s"), ("peak_rss_mib", "peak_rss_mib")):
            ratio = now[figure] / base[figure]
            row[f"ratio_{what}"] = round(ratio, 3)
            row[f"met_{what}"] = ratio <= 1 + TOLERANCE
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", metavar="REV", required=True,
                    help="the git revision this tree's figures are held to")
    args = ap.parse_args()
    n = int(os.environ.get("VBW_BENCH_AT", "100000"))
    load = os.getloadavg()[0]
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "baseline").mkdir()
        trees = {"this": ROOT, "baseline": export(args.baseline, work / "baseline")}
        rows = verdicts(measure(trees, work, n))
    result = {"machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version(),
                          "load_1min": round(load, 2),
                          "load_1min_after": round(os.getloadavg()[0], 2)},
              "measured": time.strftime("%Y-%m-%d"), "revision": head,
              "baseline": args.baseline, "items": n, "rounds": REPEATS,
              "startup_runs": STARTUP_RUNS, "tolerance": TOLERANCE, "rows": rows}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['case']}: wall {row['this']['median_wall_s']} s vs "
              f"{row['baseline']['median_wall_s']} s "
              f"({row['ratio_wall_s']:.2f}x, {'met' if row['met_wall_s'] else 'MISSED'}); "
              f"peak RSS {row['this']['peak_rss_mib']} vs {row['baseline']['peak_rss_mib']} "
              f"MiB ({row['ratio_peak_rss_mib']:.2f}x, "
              f"{'met' if row['met_peak_rss_mib'] else 'MISSED'})")


if __name__ == "__main__":
    main()
