"""Benchmark: what `vbw` with no arguments costs as a fresh process, and where it goes.

    python -m tests.benchmarks.bench_startup                     # this checkout -> startup.json
    python -m tests.benchmarks.bench_startup --previous ab6d93d  # a git revision -> startup.previous.json

Every figure is of a source tree run as `python -m vbw` from an empty working folder, with
PYTHONPATH pointing at the tree and bytecode caching on (as a pip install has it; one
warm-up run writes the tree's .pyc files). A revision is exported with `git archive` into
a temporary folder, so the previous figures are re-measured on the same machine the same
way. Measured:

1. the demo: `vbw` re-scoring both bundled demo replays (median and min wall seconds,
   CPU seconds and peak RSS over VBW_BENCH_RUNS runs, default 9), and beside it, run for
   run (alternating, so a busy machine weighs on both alike), the floor: a fresh
   interpreter importing the dependencies that run needs (FLOOR_IMPORTS) and nothing
   else; the target is the demo within TARGET_RATIO times that floor (issue 22). Every
   run has its own empty cache folder (XDG_CACHE_HOME) filled by a warm-up run, as a
   user's second run finds it; the demo with an empty cache (a first run ever: every
   distinct schema's metaschema check, vbw.task.schema.cache) is measured too;
2. a bare interpreter (`python -c pass`, site and .pth files included) and
   `import vbw.cli.command, vbw.cli.job`;
3. the moments of a run with the warm worker (vbw.cli.warm_worker), as the console script runs it:
   when the composed job is handed over, when the worker's imports are done, when the
   outcome is back, when the process ends (TIMELINE; medians);
4. the import budget per dependency: `python -X importtime -m vbw` on the demo in one
   process (VBW_WARM=0: one import tree), each module's own import time charged to the
   nearest importing module that belongs to a dependency (hydra, omegaconf, pydantic, ...)
   or to vbw, medians over the runs; and each dependency imported alone in a fresh
   process (minus the bare interpreter);
5. the phases of one run in one process (VBW_WARM=0: every step seen in one place;
   in-process wall time around the pipeline's steps, median over the runs): composing the
   config, Hydra's job set-up, checking the task, scoring, bootstrap and report, writing
   the files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OUT = HERE / "startup.json"
PREVIOUS = HERE / "startup.previous.json"
# vbw's direct dependencies in the demo, in the order the README lists them
DEPS = ("hydra", "omegaconf", "pydantic", "numpy", "jsonschema", "jmespath", "jinja2", "yaml",
        "orjson", "jsonschema_rs", "re2")
# the floor: every dependency the demo run imports (`unlisted` checks -X importtime for
# any other), with annotated_types, which pydantic imports only once a model is built
FLOOR_IMPORTS = "import " + ", ".join((*DEPS, "annotated_types"))
TARGET_RATIO = 2.0
# what `vbw` imports before a job runs (a tree from before vbw/cli/: vbw.cli and vbw.app)
IMPORT_VBW = ("try:\n    import vbw.cli.command, vbw.cli.job\n"
              "except ImportError:\n    import vbw.cli, vbw.app\n")

# Run inside the child: wrap the pipeline's steps with a wall clock, then run `vbw`.
# Steps that a tree does not have are skipped (an older revision has other names).
PHASES = r"""
import functools, importlib, json, sys, time
t0 = time.perf_counter()
try:
    import vbw.cli.command, vbw.cli.job
except ImportError:  # a tree from before vbw/cli/
    import vbw.cli, vbw.app
spent = {"import vbw": time.perf_counter() - t0}
def wrap(where, name, label):
    try:
        owner = importlib.import_module(where)
        for part in name.split(".")[:-1]:
            owner = getattr(owner, part)
        leaf = name.split(".")[-1]
        f = getattr(owner, leaf)
    except (ImportError, AttributeError):
        return
    if getattr(f, "_bench_timed", False):  # one function bound under two names
        return
    @functools.wraps(f)
    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
    timed._bench_timed = True
    setattr(owner, leaf, timed)
for where, name, label in json.loads(sys.argv[1]):
    wrap(where, name, label)
sys.argv = ["vbw"] + sys.argv[2:]
try:
    vbw.cli.main()
except SystemExit as e:
    if e.code:
        raise
spent["total in process"] = time.perf_counter() - t0
sys.stderr.write("PHASES " + json.dumps(spent) + "\n")
"""
# (module, attribute, label): the steps of a replay-mode run, in order
STEPS = [
    ("vbw.cli", "check_command_line", "compose the config (vbw.cli.compose)"),
    ("vbw.cli.command", "check_command_line", "compose the config (vbw.cli.compose)"),
    ("hydra._internal.config_loader_impl", "ConfigLoaderImpl.load_configuration",
     "every composition (Hydra's loader)"),
    ("hydra.core.utils", "run_job", "Hydra's job (run_job, vbw inside it)"),
    ("hydra._internal.hydra", "run_job", "Hydra's job (run_job, vbw inside it)"),
    ("vbw.sweep.status", "select_tasks", "load the tasks"),
    ("vbw.cli.job", "select_tasks", "load the tasks"),
    ("vbw.modes.scoring", "open_replay", "open the replays"),
    ("vbw.modes.scoring", "score_stream", "read, check and score the items (streamed)"),
    ("vbw.modes.scoring", "build_report", "rates, bootstrap CIs, flips"),
    ("vbw.modes.scoring", "browser", "report.html's item data (a second pass)"),
    ("vbw.modes.scoring", "write_reports", "write the reports (report.html's data included)"),
]


# Run inside the child: `vbw` as the console script runs it (vbw.__main__), with the warm
# worker's three moments told on stderr: this process hands the composed job over, the
# worker's imports are done (it is forked, so it tells them itself), the outcome is back.
TIMELINE = r"""
import os, sys, time
t0 = time.perf_counter()
try:
    from vbw.cli import warm_worker as warm
except ImportError:  # a tree from before vbw/cli/
    from vbw import warm
def tell(what):
    os.write(2, f"WARM {what} {time.perf_counter() - t0:.6f}\n".encode())
prepare, hand_over = warm._prepare, warm.hand_over
def timed_prepare():
    prepare()
    tell("ready")
def timed_hand_over(*a):
    tell("handed")
    try:
        return hand_over(*a)
    finally:
        tell("back")
warm._prepare, warm.hand_over = timed_prepare, timed_hand_over
import atexit
atexit.register(tell, "end")
sys.argv = ["vbw"] + sys.argv[1:]
from vbw.__main__ import main
main()
"""
MOMENTS = {"handed": "the command line composed, Hydra's job set up, the job handed over",
           "ready": "the warm worker's imports done",
           "back": "the job done, its output back in this process",
           "end": "the exit handlers run (the process ends right after)"}


def child_env(tree: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """Wall and CPU seconds, peak RSS and stderr of one child process."""
    t = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read().decode() if p.stderr else ""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}:\n{err[-3000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024, "stderr": err}


def vbw_args(work: Path, i: int, *pre: str) -> list[str]:
    return [sys.executable, *pre, "-m", "vbw", f"hydra.run.dir={work}/run{i}"]


def summary(rs: list[dict]) -> dict:
    """Runs of one command (`timed`'s results) as one figure: median and least wall,
    median CPU, largest peak RSS, and every run's wall."""
    walls = [r["wall"] for r in rs]
    return {"runs": len(rs), "median_wall_s": round(statistics.median(walls), 3),
            "min_wall_s": round(min(walls), 3),
            "median_cpu_s": round(statistics.median(r["cpu"] for r in rs), 3),
            "peak_rss_mib": round(max(r["rss_mib"] for r in rs), 1),
            "wall_runs_s": [round(w, 3) for w in walls]}


def bench_demo(work: Path, env: dict[str, str], runs: int) -> dict:
    """The demo (warm cache) and the dependency floor, alternating; then the demo with an
    empty cache folder each run. Ratios are of medians."""
    timed(vbw_args(work, -1), work, env)  # warm-up: writes the tree's bytecode, the cache
    floor_args = [sys.executable, "-c", FLOOR_IMPORTS]
    timed(floor_args, work, env)
    demo, floor, cold = [], [], []
    for i in range(runs):
        demo.append(timed(vbw_args(work, i), work, env))
        floor.append(timed(floor_args, work, env))
    for i in range(runs):
        empty = work / f"cache{i}"
        cold.append(timed(vbw_args(work, 200 + i), work, {**env, "XDG_CACHE_HOME": str(empty)}))
    out = summary(demo)
    out["floor"] = summary(floor)
    out["cold_cache"] = summary(cold)
    for what in ("wall", "cpu"):
        out[f"ratio_{what}"] = round(out[f"median_{what}_s"] / out["floor"][f"median_{what}_s"],
                                     2)
    out["cold_cache"]["ratio_wall"] = round(
        out["cold_cache"]["median_wall_s"] / out["floor"]["median_wall_s"], 2)
    return out


def median_wall(args: list[str], work: Path, env: dict[str, str], runs: int) -> float:
    return statistics.median(timed(args, work, env)["wall"] for _ in range(runs))


def parse_importtime(text: str) -> list[tuple[int, int, str]]:
    """(self microseconds, nesting depth, module) per line of `-X importtime` output."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)", line)
        if m:
            rows.append((int(m[1]), len(m[2]) // 2, m[3]))
    return rows


def attribute(rows: list[tuple[int, int, str]]) -> Counter:
    """Each module's own time, charged to its nearest importer (itself included) that is a
    dependency or vbw; the rest (the interpreter's start, the standard library imported
    first by nobody of those) to `other`. A module line follows its children's, so the
    importer chain is rebuilt walking backwards."""
    owners = (*DEPS, "vbw")
    out: Counter = Counter()
    chain: list[tuple[int, str]] = []
    for us, depth, name in reversed(rows):
        while chain and chain[-1][0] >= depth:
            chain.pop()
        chain.append((depth, name))
        top = next((n.split(".")[0] for _, n in reversed(chain)
                    if n.split(".")[0] in owners), "other")
        out[top] += us
    return out


def unlisted(rows: list[tuple[int, int, str]]) -> list[str]:
    """Third-party packages that vbw itself imports but DEPS (so the floor) leaves out:
    a module whose nearest importer among DEPS and vbw is vbw, outside the standard
    library, and not tried by a standard library module (pickle probes for Jython's
    `org.python.core`; importtime lists the failed attempt). The floor is only the floor
    if this is empty."""
    out: set[str] = set()
    chain: list[tuple[int, str]] = []
    for _, depth, name in reversed(rows):
        while chain and chain[-1][0] >= depth:
            chain.pop()
        chain.append((depth, name))
        top = name.split(".")[0]
        owner = next((n.split(".")[0] for _, n in reversed(chain[:-1])
                      if n.split(".")[0] in (*DEPS, "vbw")), None)
        importer = next((n.split(".")[0] for _, n in reversed(chain[:-1])
                         if n.split(".")[0] != top), None)
        if owner == "vbw" and top not in (*DEPS, "vbw", "annotated_types") \
                and not top.startswith("_") \
                and top not in sys.stdlib_module_names \
                and importer not in sys.stdlib_module_names:
            out.add(top)
    return sorted(out)


def bench_imports(work: Path, env: dict[str, str], runs: int) -> dict:
    texts = [timed(vbw_args(work, 100 + i, "-X", "importtime"), work, env)["stderr"]
             for i in range(runs)]
    per_run = [attribute(parse_importtime(t)) for t in texts]
    bare = median_wall([sys.executable, "-c", "pass"], work, env, runs)
    out = {}
    for dep in (*DEPS, "vbw", "other"):
        in_run = statistics.median(c[dep] for c in per_run) / 1000
        alone = None
        if dep in DEPS:
            alone = (median_wall([sys.executable, "-c", f"import {dep}"], work, env, runs)
                     - bare) * 1000
        out[dep] = {"in_vbw_ms": round(in_run, 1),
                    "alone_ms": None if alone is None else round(alone, 1)}
    return {"per_dependency": out, "not_in_floor": unlisted(parse_importtime(texts[0])),
            "median_total_ms": round(statistics.median(sum(c.values()) for c in per_run)
                                     / 1000, 1),
            "bare_python_s": round(bare, 3),
            "import_vbw_s": round(median_wall([sys.executable, "-c", IMPORT_VBW],
                                              work, env, runs), 3)}


def bench_phases(work: Path, env: dict[str, str], runs: int) -> dict:
    found: list[dict] = []
    for i in range(runs):
        r = timed([sys.executable, "-c", PHASES, json.dumps(STEPS),
                   f"hydra.run.dir={work}/phase{i}"], work, env)
        line = next(x for x in r["stderr"].splitlines() if x.startswith("PHASES "))
        found.append(json.loads(line[len("PHASES "):]))
    labels = ["import vbw"] + [s[2] for s in STEPS] + ["total in process"]
    return {k: round(1000 * statistics.median(f.get(k, 0.0) for f in found), 1)
            for k in labels if any(k in f for f in found)}


def bench_timeline(work: Path, env: dict[str, str], runs: int) -> dict | None:
    """When the moments of a plain run happen (ms from the interpreter's first line of
    vbw.__main__), medians; None for a tree without the warm worker."""
    tree = Path(env["PYTHONPATH"]) / "vbw"
    if not ((tree / "cli" / "warm_worker.py").is_file() or (tree / "warm.py").is_file()):
        return None
    found: list[dict[str, float]] = []
    for i in range(runs):
        r = timed([sys.executable, "-c", TIMELINE, f"hydra.run.dir={work}/warm{i}"], work, env)
        found.append({w: float(t) for _, w, t in (x.split() for x in r["stderr"].splitlines()
                                                  if x.startswith("WARM "))})
    return {label: round(1000 * statistics.median(f[k] for f in found), 1)
            for k, label in MOMENTS.items() if all(k in f for f in found)}


def measure(tree: Path, runs: int) -> dict:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = child_env(tree, work / "cache")
        demo = bench_demo(work, env, runs)
        print(f"  demo: {demo}", file=sys.stderr)
        timeline = bench_timeline(work, env, runs)
        # one process: one import tree, every step seen (VBW_WARM for older revisions)
        alone = {**env, "VBW_WARM": "0", "VBW_PROCESSES": "1"}
        imports = bench_imports(work, alone, runs)
        phases = bench_phases(work, alone, runs)
    return {"machine": {"cpu": platform.processor() or platform.machine(),
                        "cores": os.cpu_count(), "python": platform.python_version()},
            "measured": time.strftime("%Y-%m-%d"),
            "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
            "target_ratio": TARGET_RATIO, "floor_imports": FLOOR_IMPORTS, "demo": demo,
            "imports": imports, "phases_ms": phases, "timeline_ms": timeline}


def export(rev: str, into: Path) -> Path:
    """The source tree of git revision `rev`, as `git archive` writes it."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "vbw", "conf", "tasks",
                              "replays"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--previous", metavar="REV",
                    help="measure git revision REV into startup.previous.json instead")
    args = ap.parse_args()
    runs = int(os.environ.get("VBW_BENCH_RUNS", "9"))
    if args.previous:
        with tempfile.TemporaryDirectory() as tmp:
            result = measure(export(args.previous, Path(tmp)), runs)
        result["revision"] = args.previous
        out = PREVIOUS
    else:
        result, out = measure(ROOT, runs), OUT
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
