"""Benchmark: a live sweep over the joblib launcher vs the same jobs one after another,
and one run split over 2 shards vs the same run in one job (a script, not a timed test).

    python -m tests.benchmarks.bench_sweep      # writes tests/benchmarks/sweep.json
    VBW_BENCH_ITEMS=2 VBW_BENCH_OUT=/tmp/s.json python -m tests.benchmarks.bench_sweep  # quick check

SmolLM2-135M, `arms=headline`, greedy, the first N items (VBW_BENCH_ITEMS, default 8).
Sweep: the four jobs task={bfcl_simple,gsm8k} x engine={outlines,llamacpp}, once with the
joblib launcher (2 jobs at a time, `threads=1` each) and once with Hydra's basic launcher
(one job at a time, `threads=2`), so both use the machine's 2 cores without
oversubscribing them: llama.cpp spin-waits its threads, and 2 jobs x 2 threads on 2 cores
would slow every job down. Shards: bfcl_simple on llamacpp, `shard.index=0,1
shard.count=2` under joblib (threads=1 each, merged at the end) vs one job with threads=2.
Every command is a fresh `vbw` process, as a user runs it; wall times include model
loads, canaries and the merge. Run it on an otherwise idle machine (VBW_BENCH_CORES
sets the jobs and threads for a machine with more cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

OUT = Path(os.environ.get("VBW_BENCH_OUT", Path(__file__).resolve().parent / "sweep.json"))
ITEMS = int(os.environ.get("VBW_BENCH_ITEMS", "8"))
CORES = int(os.environ.get("VBW_BENCH_CORES", "2"))
BASE = ["mode=live", "model=smollm2_135m", "arms=headline", f"n={ITEMS}", "progress=off"]


def _vbw(args: list[str], cwd: Path) -> float:
    """Wall seconds of one `python -m vbw` command; a failure stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vbw", *args], cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"vbw {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return round(wall, 1)


def _joblib(n_jobs: int) -> list[str]:
    return ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={n_jobs}"]


def main() -> None:
    from vbw.generate.provenance import cpu_name

    work = Path(tempfile.mkdtemp(prefix="vbw-bench-sweep-"))
    grid = ["task=bfcl_simple,gsm8k", "engine=outlines,llamacpp"]
    parallel = _vbw(["-m", *_joblib(CORES), *BASE, *grid, "threads=1",
                     f"hydra.sweep.dir={work}/parallel"], work)
    serial = _vbw(["-m", *BASE, *grid, f"threads={CORES}", f"hydra.sweep.dir={work}/serial"],
                  work)
    one = ["task=bfcl_simple", "engine=llamacpp"]
    sharded = _vbw(["-m", *_joblib(2), *BASE, *one, "threads=1", "shard.index=0,1",
                    "shard.count=2", f"hydra.sweep.dir={work}/sharded"], work)
    whole = _vbw([*BASE, *one, f"threads={CORES}", f"hydra.run.dir={work}/whole"], work)
    result = {"measured": date.today().isoformat(), "cpu": cpu_name(), "cores": os.cpu_count(),
              "bench_cores": CORES, "items": ITEMS,
              "sweep": {"jobs": 4, "joblib_s": parallel, "serial_s": serial,
                        "speedup": round(serial / parallel, 2)},
              "shards": {"count": 2, "sharded_s": sharded, "whole_s": whole,
                         "speedup": round(whole / sharded, 2)},
              "load_average": os.getloadavg()[0]}
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
