"""Benchmark: replay scoring speed and memory (a script, not a timed test).

    python -m tests.benchmarks.bench_scoring            # writes tests/benchmarks/scoring.json
    python -m tests.benchmarks.bench_scoring --previous REV   # git revision REV ->
                                                              # scoring.previous.json
    VBW_BENCH_SIZES=10000 python -m tests.benchmarks.bench_scoring   # fewer synthetic sizes

The figures it replaces are scoring.previous.json's (the same script on the revision
before a change, `--previous`), which docs/performance.md shows beside each new figure.
A tree is run as `python -m vbw` with PYTHONPATH pointing at it (a revision is exported
with `git archive`, as bench_startup does).

Scoring synthetic replays of 10k, 30k and 100k items with 6 arms (GSM8K's shape; texts
cycled from the bundled GSM8K replay over a synthetic dataset), end to end through `vbw`
(a fresh `python -m vbw`, as a user runs it): wall seconds and peak RSS per size, to show
both are linear in items and to check the targets of 100k items x 6 arms in <= 10 s and
<= 400 MiB, and within 5x the floor: a fresh process that decodes every line of the same
replay with Python's `json` module, measured in the same run (issue 22): `vbw` and the
floor alternate REPEATS times (3; VBW_BENCH_REPEATS): the times are their medians, the
peak RSS the largest.
A last run times the steps in process, in one process (bench_startup's PHASES,
VBW_WARM=0), which say what bounds a missed target.
(The demo's start-up figures are tests/benchmarks/bench_startup.py's.)

In the same run, at the largest size (VBW_BENCH_AT, default 100,000 items), the two other
modes that read replays of that size, measured the same way (issue 22: within the time and
memory class of scoring one): `mode=compare` of two such replays (the second with every
text taken from another item, so the arms disagree) and `mode=merge` of 4 shards of a
quarter each (a vbw-replay/1 shard per index, as `shard.count=4` writes them), which joins
them into the run's replay and scores it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from tests.benchmarks.bench_startup import PHASES, STEPS, export

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "scoring.json"
PREVIOUS = Path(__file__).resolve().parent / "scoring.previous.json"
# runs of `vbw` and of the floor per size, alternating; the medians are the figures
REPEATS = int(os.environ.get("VBW_BENCH_REPEATS", "3"))
FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, peak RSS MiB, CPU seconds, stderr) of one child process. CPU seconds
    (user + system, its waited-for children included) say how much of the wall time was
    the child's own work on a machine shared with other jobs."""
    t = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read().decode() if p.stderr else ""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}: {err[-3000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, err


def _phases(stderr: str) -> dict[str, float]:
    line = next(x for x in stderr.splitlines() if x.startswith("PHASES "))
    return {k: round(v, 2) for k, v in json.loads(line[len("PHASES "):]).items()}


def _env(tree: Path, work: Path) -> dict[str, str]:
    """The children's environment: vbw from `tree`, a fresh schema cache."""
    env = {**os.environ, "PYTHONPATH": str(tree), "XDG_CACHE_HOME": str(work / "cache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


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


def _source(name: str) -> tuple[str, list[dict], str]:
    """A committed replay's header line, item records and last line."""
    lines = (ROOT / "replays/gsm8k" / name).read_text().splitlines()
    return lines[0], [json.loads(x) for x in lines[1:]], lines[-1]


def make_other(work: Path, n: int, shift: int = 7) -> Path:
    """make_synthetic's replay with each item's texts taken from the item `shift` further
    on, written line by line: this process stays small, since a child's peak RSS starts
    from its parent's (fork)."""
    meta, records, _ = _source("qwen2_5_0_5b/outlines.jsonl")
    dest = work / f"syn{n}" / "other.jsonl"
    with open(dest, "w") as f:
        f.write(meta + "\n")
        for i in range(n):
            f.write(json.dumps(dict(records[(i + shift) % 200], id=f"gsm8k_test_{i}")) + "\n")
    return dest


# prompt hashes of the synthetic task's first 200 items, printed by a child (its rows are
# loaded there, not in this process): item k's prompts are item k % 200's
PROMPT_HASHES = ("import json, sys; from pathlib import Path; "
                 "from vbw.task.arms import parse_arm; from vbw.task.runner import load_task; "
                 "t = load_task(Path(sys.argv[1])); arms = [parse_arm(k) for k in "
                 "json.loads(sys.argv[2])]; ids = t.ids(200); print(json.dumps("
                 "[t.prompt_hash(t.item(k, ids[k]), arms) for k in range(200)]))")


def make_shards(work: Path, n: int, task: Path, count: int = 4,
                texts: str = "smollm2_135m/outlines.jsonl") -> Path:
    """`count` finished shard replays of an n-item run of `task` (a sweep folder), with
    the texts of the committed replay `texts`: SmolLM2's (a live vbw run's lines, prompt
    hashes included), or the synthetic replay's own (Qwen's, as the predecessor recorded
    them: each line is given its item's prompt hash, so the merge checks every one)."""
    meta_line, records, end_line = _source("smollm2_135m/outlines.jsonl")
    records = records[:-1]  # the end line
    task_hash = subprocess.run(  # the task's 100,000 rows are loaded in a child, not here
        [sys.executable, "-c", "import sys; from pathlib import Path; from vbw.task.runner "
         "import load_task; print(load_task(Path(sys.argv[1])).generation_hash())",
         str(task)], check=True, capture_output=True, text=True).stdout.strip()
    meta = {**json.loads(meta_line)["meta"], "n": n, "task_hash": task_hash}
    if texts != "smollm2_135m/outlines.jsonl":
        _, records, _ = _source(texts)
        hashes = json.loads(subprocess.run(
            [sys.executable, "-c", PROMPT_HASHES, str(task), json.dumps(meta["arms"])],
            check=True, capture_output=True, text=True).stdout)
        records = [dict(r, prompt_hash=hashes[k]) for k, r in enumerate(records[:200])]
    end = json.loads(end_line)["end"]
    sweep = work / f"shards{n}-{texts.split('/')[0]}"
    for i in range(count):
        (sweep / str(i)).mkdir(parents=True)
        with open(sweep / str(i) / "replay.jsonl", "w") as f:
            f.write(json.dumps({"meta": {**meta, "shard": {"index": i, "count": count,
                                                             "of": n}}}) + "\n")
            for k in range(i, n, count):
                f.write(json.dumps(dict(records[k % 200], id=f"gsm8k_test_{k}")) + "\n")
            f.write(json.dumps({"end": {**end, "items": len(range(i, n, count))}}) + "\n")
    return sweep


def _row(what: str, n: int, args: list[str], work: Path, env: dict[str, str]) -> dict:
    """One mode's row: the median time of REPEATS runs, the largest peak RSS."""
    runs = [_run(args, work, env) for _ in range(REPEATS)]
    wall, cpu = (statistics.median(r[k] for r in runs) for k in (0, 2))
    rss = max(r[1] for r in runs)
    print(f"  {what} {n:>7} items: {wall:6.2f} s ({cpu:.2f} s CPU), {rss:6.1f} MiB",
          file=sys.stderr)
    return {"mode": what, "items": n, "arms": 6, "runs": REPEATS, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "peak_rss_mib": round(rss, 1),
            "us_per_item_arm": round(wall / (n * 6) * 1e6, 1)}


def bench_modes(tree: Path, work: Path, n: int) -> list[dict]:
    """mode=compare of two n-item replays and mode=merge of 4 shards of n/4, beside a
    scoring run of the same replay in the same run."""
    task, replay = (work / f"syn{n}" / "task.yaml", work / f"syn{n}" / "replay.jsonl")
    if not replay.exists():
        task, replay = make_synthetic(work, n)
    other = make_other(work, n)
    sweep = make_shards(work, n, task)
    own = make_shards(work, n, task, texts="qwen2_5_0_5b/outlines.jsonl")
    env = _env(tree, work)
    return [
        _row("compare", n, [sys.executable, "-m", "vbw", f"task.files=[{task}]",
                            "mode=compare",
                            f"replays=[{replay},{other}]",
                            f"hydra.run.dir={work}/compare{n}"], work, env),
        # shards of the scored replay's own texts: the merged replay is that replay's items
        _row("merge-own", n, [sys.executable, "-m", "vbw", f"task.files=[{task}]",
                              "mode=merge", f"replays=[{own}]",
                              f"hydra.run.dir={work}/merge-own{n}"], work, env),
        _row("merge", n, [sys.executable, "-m", "vbw", f"task.files=[{task}]", "mode=merge",
                          f"replays=[{sweep}]",
                          f"hydra.run.dir={work}/merge{n}"], work, env),
        # what the merge's time is made of: scoring the replay it joined, alone
        _row("merged", n, [sys.executable, "-m", "vbw", f"task.files=[{task}]",
                           f"replay={work}/merge{n}/replay.jsonl",
                           f"hydra.run.dir={work}/merged{n}"], work, env),
    ]


def bench_synthetic(tree: Path, work: Path, sizes: list[int]) -> list[dict]:
    """Each size: `vbw` on the synthetic replay as a user runs it (`python -m vbw`: the
    console script, its warm worker included) and the json-decode floor on the same file,
    alternately REPEATS times (the median times are the figures, the ratio is theirs: a
    machine shared with other jobs slows one run, not the median; the peak RSS is the
    largest seen), then the same run with its steps
    timed in process (bench_startup's PHASES, in one process: VBW_WARM=0), which say what
    bounds it."""
    env = _env(tree, work)
    out = []
    for n in sizes:
        task, replay = make_synthetic(work, n)
        args = [f"task.files=[{task}]", f"replay={replay}"]
        runs, floors = [], []
        for i in range(REPEATS):
            runs.append(_run([sys.executable, "-m", "vbw", *args,
                              f"hydra.run.dir={work}/syn{n}/out{i}"], work, env))
            floors.append(_run([sys.executable, "-c", FLOOR, str(replay)], work, env))
        wall, cpu = (statistics.median(r[k] for r in runs) for k in (0, 2))
        fwall, fcpu = (statistics.median(r[k] for r in floors) for k in (0, 2))
        rss, frss = max(r[1] for r in runs), max(r[1] for r in floors)  # the largest seen
        *_, err = _run([sys.executable, "-c", PHASES, json.dumps(STEPS), *args,
                        f"hydra.run.dir={work}/syn{n}/steps"], work,
                       {**env, "VBW_WARM": "0", "VBW_PROCESSES": "1"})
        out.append({"items": n, "arms": 6, "runs": REPEATS, "wall_s": round(wall, 2),
                    "cpu_s": round(cpu, 2), "peak_rss_mib": round(rss, 1),
                    "us_per_item_arm": round(wall / (n * 6) * 1e6, 1),
                    "replay_mib": round(replay.stat().st_size / 2**20, 1),
                    "floor": {"wall_s": round(fwall, 2), "cpu_s": round(fcpu, 2),
                              "peak_rss_mib": round(frss, 1)},
                    "ratio_wall": round(wall / fwall, 2), "ratio_cpu": round(cpu / fcpu, 2),
                    "wall_runs_s": [round(r[0], 2) for r in runs],
                    "floor_runs_s": [round(r[0], 2) for r in floors],
                    "phases_s": _phases(err)})
        print(f"  synthetic {n:>7} items: {wall:6.2f} s ({cpu:.2f} s CPU), {rss:6.1f} MiB; "
              f"json floor {fwall:.2f} s ({fcpu:.2f} s CPU); medians of {REPEATS}",
              file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--previous", metavar="REV",
                    help="measure git revision REV into scoring.previous.json instead")
    args = ap.parse_args()
    sizes = [int(x) for x in os.environ.get("VBW_BENCH_SIZES", "10000,30000,100000").split(",")]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree = ROOT
        if args.previous:
            (work / "tree").mkdir()
            tree = export(args.previous, work / "tree")
        synthetic = bench_synthetic(tree, work, sizes)
        modes = bench_modes(tree, work, int(os.environ.get("VBW_BENCH_AT", max(sizes))))
    result = {"machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version(),
                          "load_1min": round(load, 2),
                          "load_1min_after": round(os.getloadavg()[0], 2)},
              "measured": time.strftime("%Y-%m-%d"), "synthetic": synthetic, "modes": modes}
    out = OUT
    if args.previous:
        result["revision"], out = args.previous, PREVIOUS
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
