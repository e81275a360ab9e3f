"""Benchmark: scoring hostile model outputs (a script, not a timed test).

    python -m tests.benchmarks.bench_hostile          # writes tests/benchmarks/hostile.json

1. Each extraction step on adversarial outputs of 1 MB and 10 MB (best of a few runs,
   in this process): seconds, seconds per MB, and how the time grows from 1 to 10 MB
   (10x is linear). The shapes are the ones that were superlinear before (spaces after
   `Answer:`, `{` x N, `{"a":"` x N, deep nesting, unclosed calls) plus the slowest shape
   found for the JSON scan since.
2. End to end: the bundled 200-item GSM8K and BFCL replays with one 10 MB hostile output
   per arm, scored by `python -m vbw task=... replay=...` in a fresh process.
3. Page memory: report.html of the 200-item GSM8K replay whose every text is `<` (which
   escaping makes 6 characters): page size against the run's peak RSS.

    python -m tests.benchmarks.bench_hostile page    # only 3, merged into hostile.json

The load average is recorded before and after: figures for the README come from an idle
machine.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "hostile.json"
MB = 1 << 20


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`head` + `unit` repeated to `size` characters in all + `tail`."""
    n = max(0, size - len(head) - len(tail)) // len(unit)
    return head + unit * n + tail


# (step, shape, text of a given size). The step names how the text is scored.
SHAPES: list[tuple[str, str, Callable[[int], str]]] = [
    ("gsm8k free text", "`Answer:` + spaces + `x`", lambda n: _fill(" ", n, "Answer:", "x")),
    ("gsm8k free text", "`\\boxed{` x N", lambda n: _fill("\\boxed{", n)),
    ("gsm8k free text", "`1 ` x N (last number)", lambda n: _fill("1 ", n)),
    ("first JSON object", "`{` x N", lambda n: _fill("{", n)),
    ("first JSON object", '`{"a":"` x N', lambda n: _fill('{"a":"', n)),
    ("first JSON object", '`{"a":` x N (nesting N/5 deep)', lambda n: _fill('{"a":', n)),
    ("first JSON object", '`{"a":` + `[` x N (nesting N deep)', lambda n: _fill("[", n, '{"a":')),
    ("first JSON object", '`{"a":[` x N (nesting N/3 deep)', lambda n: _fill('{"a":[', n)),
    ("first JSON object", '`{"a":1,` x N', lambda n: _fill('{"a":1,', n)),
    ("first JSON object", '`{"answer":` + N digits + `}`',
     lambda n: _fill("7", n, '{"answer": ', "}")),
    ("first JSON object", '`{"k":[[[1 x` x N (deep array members)', lambda n: _fill('{"k":[[[1 x', n)),
    ("BFCL python_call", "`calculate_triangle_area(` x N",
     lambda n: _fill("calculate_triangle_area(", n)),
    ("BFCL python_call", "the same, closed by `)`",
     lambda n: _fill("calculate_triangle_area(", n, "", ")")),
]


def _scorers() -> dict[str, Callable[[str], Any]]:
    from vbw.task.runner import load_task

    gsm8k = load_task(ROOT / "conf/task/gsm8k.yaml")
    bfcl = load_task(ROOT / "conf/task/bfcl_simple.yaml")
    g_item, b_item = gsm8k.items(1)[0], bfcl.items(1)[0]
    g_arm = next(a for a in _arms(gsm8k) if a.kind == "constrained")
    return {"gsm8k free text": lambda t: gsm8k.free_answer(t, g_item),
            "first JSON object": lambda t: gsm8k.answer(t, g_item, g_arm),
            "BFCL python_call": lambda t: bfcl.free_answer(t, b_item)}


def _arms(task: Any) -> list[Any]:
    from vbw.task.arms import ARM_KINDS, task_arms

    return task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))


def bench_steps(sizes: list[int], runs: int) -> list[dict]:
    scorers = _scorers()
    out = []
    for step, shape, make in SHAPES:
        row: dict[str, Any] = {"step": step, "shape": shape, "seconds": {}}
        for size in sizes:
            text = make(size)
            best = float("inf")
            for _ in range(runs):
                t = time.perf_counter()
                scorers[step](text)
                best = min(best, time.perf_counter() - t)
            row["seconds"][str(size // MB)] = round(best, 4)
        print(f"  {step:18s} {shape:40s} {row['seconds']}", file=sys.stderr)
        out.append(row)
    return out


# Per arm of the end-to-end replays, the hostile 10 MB text it gets (one item each).
E2E_TEXTS = {"gsm8k": ["`Answer:` + spaces + `x`", "`{` x N", '`{"a":"` x N',
                       '`{"a":` x N (nesting N/5 deep)', '`{"k":[[[1 x` x N (deep array members)',
                       '`{"answer":` + N digits + `}`'],
             "bfcl_simple": ["`calculate_triangle_area(` x N", "`{` x N", '`{"a":"` x N',
                             '`{"a":` x N (nesting N/5 deep)']}


def hostile_replay(task: str, dest: Path, size: int, shapes: list[str]) -> Path:
    """The bundled Qwen replay of `task`, arm j of item j replaced by the j-th shape."""
    make = {shape: fn for _, shape, fn in SHAPES}
    lines = (ROOT / "replays" / task / "qwen2_5_0_5b" / "outlines.jsonl").read_text().splitlines()
    with open(dest, "w") as f:
        f.write(lines[0] + "\n")
        for i, line in enumerate(lines[1:]):
            rec = json.loads(line)
            if "arms" in rec and i < len(rec["arms"]):
                key = list(rec["arms"])[i]
                rec["arms"][key]["text"] = make[shapes[i % len(shapes)]](size)
            f.write(json.dumps(rec) + "\n")
    return dest


def bench_end_to_end(work: Path, size: int) -> list[dict]:
    out = []
    for task, shapes in E2E_TEXTS.items():
        replay = hostile_replay(task, work / f"{task}.jsonl", size, shapes)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "vbw", f"task={task}", f"replay={replay}",
                               f"hydra.run.dir={work}/{task}"], cwd=work, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"vbw failed on the hostile {task} replay: {proc.stderr}")
        out.append({"task": task, "items": 200, "hostile_outputs": len(shapes),
                    "mb_each": size // MB, "wall_s": round(wall, 2)})
        print(f"  end to end {task}: {wall:.2f} s", file=sys.stderr)
    return out


PEAK_RSS = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
            "capture_output=True, text=True); sys.stderr.write(p.stderr[-3000:]); "
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def bench_page_memory(work: Path, mb_per_item: int = 1) -> dict:
    """report.html's memory against its size when escaping amplifies the text: the bundled
    200-item GSM8K replay with every arm's text made of `<` (`mb_per_item` MB per item,
    split over its arms; each is cut to 20,000 characters on the page, 6 characters each
    once escaped). Peak RSS of `python -m vbw` in a fresh process."""
    lines = (ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl").read_text().splitlines()
    replay = work / "lt.jsonl"
    with open(replay, "w") as f:
        f.write(lines[0] + "\n")
        for line in lines[1:]:
            rec = json.loads(line)
            if "arms" in rec:
                each = mb_per_item * MB // len(rec["arms"])
                for arm in rec["arms"].values():
                    arm["text"] = "<" * each
            f.write(json.dumps(rec) + "\n")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "vbw",
                           "task=gsm8k", f"replay={replay}", f"hydra.run.dir={work}/lt"],
                          cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t
    code, rss_kib = (int(x) for x in proc.stdout.split())
    if code != 0:
        raise SystemExit(f"vbw failed on the `<` replay: {proc.stderr}")
    page = (work / "lt/report.html").stat().st_size
    row = {"items": 200, "replay_mb": round(replay.stat().st_size / MB, 1),
           "page_mb": round(page / MB, 1), "peak_rss_mib": round(rss_kib / 1024),
           "rss_per_page": round(rss_kib * 1024 / page, 2), "wall_s": round(wall, 2)}
    print(f"  page memory: {row}", file=sys.stderr)
    return row


def main() -> None:
    if sys.argv[1:] == ["page"]:
        with tempfile.TemporaryDirectory() as tmp:
            page = bench_page_memory(Path(tmp))
        data = json.loads(OUT.read_text())
        data["page_memory"] = {**page, "measured": time.strftime("%Y-%m-%d"),
                               "load_average_1min": round(os.getloadavg()[0], 2)}
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        return
    sizes = [int(x) * MB for x in os.environ.get("VBW_BENCH_MB", "1,10").split(",")]
    runs = int(os.environ.get("VBW_BENCH_RUNS", "3"))
    load_before = os.getloadavg()
    steps = bench_steps(sizes, runs)
    with tempfile.TemporaryDirectory() as tmp:
        e2e = bench_end_to_end(Path(tmp), sizes[-1])
        page = bench_page_memory(Path(tmp))
    result = {"machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version()},
              "measured": time.strftime("%Y-%m-%d"),
              "load_average_1min": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
              "sizes_mb": [s // MB for s in sizes], "runs": runs, "steps": steps,
              "end_to_end": e2e, "page_memory": page}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
