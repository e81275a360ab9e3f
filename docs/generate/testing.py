"""`python -m docs.generate.testing FULL_SUITE_LOG`: docs/testing.md's figures, from runs.

The full suite is too long to run here for a page: its figures are read from the output of
a real run of the README's test command (CI's log, `python -m pytest -q` with
`--durations`), its last line ("N passed, M failed ... in S s") and its slowest tests. The
fast tier is run here, now (`python -m pytest -q -m "not slow"`), timed by wall clock and by
its processes' CPU time. The figures go to tests/benchmarks/testing.json, from which
`python -m docs.generate` renders the page's `testing-figures` block (`block`).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "tests" / "benchmarks" / "testing.json"
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ passed.*?) in (?P<seconds>[\d.]+)s")
DURATION = re.compile(r"^(?P<s>[\d.]+)s (?:call|setup|teardown)\s+(?P<test>\S+)")


def summary(lines: list[str]) -> tuple[str, float]:
    """The counts and the seconds of pytest's last summary line."""
    for line in reversed(lines):
        m = SUMMARY.match(line.strip())
        if m:
            return m["counts"], float(m["seconds"])
    raise SystemExit("no pytest summary line (N passed ... in S s) in the log")


def slowest(lines: list[str], k: int = 8) -> list[tuple[float, str]]:
    """The `k` slowest test steps the log's --durations table lists."""
    found = [(float(m["s"]), m["test"]) for m in map(DURATION.match, lines) if m]
    return sorted(found, reverse=True)[:k]


def fast_tier() -> tuple[str, float, float]:
    """Run the fast tier here: its counts, wall seconds and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "not slow",
                           "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    counts, _ = summary(proc.stdout.splitlines())
    return counts, wall, cpu


def block(path: Path = FIGURES) -> str:
    """The figures of `path` as the page shows them."""
    f = json.loads(path.read_text(encoding="utf-8"))
    rows = "\n".join(f"| {s:.0f} s | `{t}` |" for s, t in f["slowest"])
    return (f"Measured on {f['date']}, {f['cores']} cores (`python -m docs.generate.testing`):"
            f"\n\n- full suite (a CI run's log): {f['full_counts']} in "
            f"{f['full_seconds'] / 60:.1f} min;\n- fast tier (run then, 1-minute load average "
            f"{f['load']:.2f} before): {f['fast_counts']}, {f['fast_wall']:.0f} s wall, "
            f"{f['fast_cpu']:.0f} s of CPU.\n\nThe slowest steps of that full run:\n\n"
            f"| time | test |\n|---|---|\n{rows}\n")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    lines = Path(argv[0]).read_text(encoding="utf-8", errors="replace").splitlines()
    (full_counts, full_seconds), slow = summary(lines), slowest(lines)
    load = os.getloadavg()[0]
    fast_counts, fast_wall, fast_cpu = fast_tier()
    FIGURES.write_text(json.dumps({
        "date": datetime.date.today().isoformat(), "cores": os.cpu_count(), "load": load,
        "full_counts": full_counts, "full_seconds": full_seconds, "slowest": slow,
        "fast_counts": fast_counts, "fast_wall": fast_wall, "fast_cpu": fast_cpu},
        indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
