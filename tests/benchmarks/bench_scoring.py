"""Benchmark: replay scoring speed and memory (a script, not a timed test).

    python -m tests.benchmarks.bench_scoring            # writes tests/benchmarks/scoring.json
    VBW_BENCH_SIZES=10000 python -m tests.benchmarks.bench_scoring   # fewer synthetic sizes

The figures it replaces stay in tests/benchmarks/scoring.previous.json (kept by hand when
a change is measured), which the README block shows beside each new figure.

Scoring synthetic replays of 10k, 30k and 100k items with 6 arms (GSM8K's shape; texts
cycled from the bundled GSM8K replay over a synthetic dataset), end to end through `vbw`
(a fresh process): wall seconds and peak RSS per size, to show both are linear in items
and to check the target of 100k items x 6 arms in <= 10 s and <= 400 MiB. (The demo's
start-up figures are tests/benchmarks/bench_startup.py's.)
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "scoring.json"


def _timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child process."""
    wall, rss, _ = _run(args, cwd)
    return wall, rss


def _run(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MiB, CPU seconds) of one child process. CPU seconds say how
    much of the wall time was the child's own work on a machine shared with other jobs."""
    t = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}: {p.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _vbw() -> str:
    exe = shutil.which("vbw")
    if exe is None:
        raise SystemExit("the vbw console script is not on PATH; pip install -e . first")
    return exe


def make_synthetic(work: Path, n: int) -> tuple[Path, Path]:
    """A GSM8K-shaped task over n synthetic rows and a matching 6-arm replay."""
    src = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    lines = src.read_text().splitlines()
    meta, records = lines[0], [json.loads(x) for x in lines[1:]]
    rows = [json.loads(x) for x in (ROOT / "tasks/data/gsm8k/test.jsonl").read_text().splitlines()]
    d = work / f"syn{n}"
    d.mkdir()
    with open(d / "data.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps(rows[i % 200]) + "\n")
    spec = yaml.safe_load((ROOT / "conf/task/gsm8k.yaml").read_text())
    spec["dataset"]["path"] = "data.jsonl"
    spec["dataset"].pop("first", None)  # every synthetic row
    (d / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with open(d / "replay.jsonl", "w") as f:
        f.write(meta + "\n")
        for i in range(n):
            rec = dict(records[i % 200], id=f"gsm8k_test_{i}")
            f.write(json.dumps(rec) + "\n")
    return d / "task.yaml", d / "replay.jsonl"


def bench_synthetic(work: Path, sizes: list[int]) -> list[dict]:
    out = []
    for n in sizes:
        task, replay = make_synthetic(work, n)
        wall, rss, cpu = _run([_vbw(), f"task.files=[{task}]", f"replay={replay}",
                               f"hydra.run.dir={work}/syn{n}/out"], work)
        out.append({"items": n, "arms": 6, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                    "peak_rss_mib": round(rss, 1),
                    "us_per_item_arm": round(wall / (n * 6) * 1e6, 1)})
        print(f"  synthetic {n:>7} items: {wall:6.2f} s ({cpu:.2f} s CPU), {rss:6.1f} MiB",
              file=sys.stderr)
    return out


def main() -> None:
    sizes = [int(x) for x in os.environ.get("VBW_BENCH_SIZES", "10000,30000,100000").split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        synthetic = bench_synthetic(work, sizes)
    result = {"machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version(),
                          "load_1min": round(os.getloadavg()[0], 2)},
              "measured": time.strftime("%Y-%m-%d"), "synthetic": synthetic}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
