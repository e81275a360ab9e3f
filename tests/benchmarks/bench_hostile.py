"""Benchmark: scoring hostile model outputs (a script, not a timed test).

    python -m tests.benchmarks.bench_hostile          # writes tests/benchmarks/hostile.json
    python -m tests.benchmarks.bench_hostile --server # only its server_deadlines rows

1. Each extraction step on adversarial outputs of 1 MB and 10 MB (best of a few runs,
   in this process): seconds, seconds per MB, and how the time grows from 1 to 10 MB
   (10x is linear). The shapes are the ones that were superlinear before (spaces after
   `Answer:`, `{` x N, `{"a":"` x N, deep nesting, unclosed calls) plus the slowest shape
   found for the JSON scan since.
2. End to end: the bundled 200-item GSM8K and BFCL replays with one 10 MB hostile output
   per arm, scored by `python -m vbw task=... replay=...` in a fresh process.
3. Task regexes and JSON Schema patterns that backtrack on Python's re, on hostile outputs
   (RE2 runs them), with what Python's re took (stopped at OLD_CAP_S), and a GSM8K task
   holding all of them scored end to end. `VBW_BENCH_ONLY=regex` measures only these.
4. Server deadlines (`--server`, bench_server_deadlines): how long the server backend
   takes to give up on a hostile server (dripping, silent, flooding), against its bound.
5. Page memory: report.html of the 200-item GSM8K replay whose every text is `<` (which
   escaping makes 6 characters): page size against the run's peak RSS.
6. Round 4: every end-to-end case of tests/hostile4 (exit code, seconds, peak RSS against
   the case's bounds).

    python -m tests.benchmarks.bench_hostile page    # only 5, merged into hostile.json
    python -m tests.benchmarks.bench_hostile round4  # only 6, merged into hostile.json

The load average is recorded before and after: figures for the README come from an idle
machine (the server rows are time bounds, valid on a busy one too).
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
    return {"gsm8k free text": lambda t: gsm8k.extract(t, g_item, free=True).answer,
            "first JSON object": lambda t: gsm8k.extract(t, g_item, g_arm.kind == "unconstrained"),
            "BFCL python_call": lambda t: bfcl.extract(t, b_item, free=True).answer}


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


# -- user regexes and schema patterns ----------------------------------------------------------
# Patterns a task may declare that backtrack exponentially or quadratically on Python's re
# (the heuristic screen that preceded RE2 let every one through), each with the hostile
# model output it meets: (pattern, what the output is, the output).
REGEXES: list[tuple[str, str, str]] = [
    (r"(a|aa)*b", "`a` x 5,000", "a" * 5000),
    (r"(a+|b)+c", "`a` x 5,000", "a" * 5000),
    (r"(?:\w+|,)+!", "`a` x 5,000", "a" * 5000),
    (r"(a|a?)+b", "`a` x 5,000", "a" * 5000),
    (r"Answer: ((?:a|a?)+)c", "`Answer: ` + `a` x 4,992", "Answer: " + "a" * 4992),
    (r"(?:a{1,30}){1,30}b", "`a` x 5,000", "a" * 5000),
    (r"(?:\d+|,)+%", "`1` x 5,000", "1" * 5000),
    (r"(\d+)\s*%", "100,000 digits", "1" * 100_000),
    (r"(\d+)\s*(?:units)?\s*$", "100,000 digits + `x`", "1" * 100_000 + "x"),
]
# JSON Schema patterns on a string value of a constrained output: (pattern, output, value).
SCHEMA_PATTERNS: list[tuple[str, str, str]] = [
    (r"^(a|a)*$", "32 characters", "a" * 31 + "b"),
    (r"^(a|a)*$", "5,000 characters", "a" * 4999 + "b"),
    (r"^(\w+\s?)+$", "5 kB of words", "ab " * 1700 + "!"),
]
# RE2's one superlinear case: `match: last` searches once per match, and this pattern's
# first alternative reads to the end of the digits before each one-digit match.
LAST_MATCH_LIMIT = (r"\d+x|\d", "100,000 digits, `match: last`", "1" * 100_000)
OLD_CAP_S = 10.0  # Python's re is stopped after this long


def _old_engine_seconds(code: str) -> float | None:
    """Seconds `code` takes in a fresh Python (its own timing), None if stopped at OLD_CAP_S."""
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=OLD_CAP_S, env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        return None
    return float(proc.stdout.strip())


def bench_regexes(runs: int) -> list[dict]:
    """Each hostile pattern on its output: RE2 through a regex step (match: last, reading
    the whole output) and the regex checker, best of `runs`; Python's re as before."""
    from vbw.task.check import RegexChecker
    from vbw.task.extract import RegexStep

    out = []
    for pattern, shape, text in [*REGEXES, LAST_MATCH_LIMIT]:
        step = RegexStep(kind="regex", pattern=pattern, max_chars=None)
        check = RegexChecker(kind="regex", pattern=pattern, max_chars=None)
        best = min(_seconds(lambda: (step.apply(text, {}), check.check(text, None)))
                   for _ in range(runs))
        old = _old_engine_seconds(
            "import re, time; t = time.perf_counter(); "
            f"rx = re.compile({pattern!r}); text = {text!r}; "
            "list(rx.finditer(text)); rx.fullmatch(text); print(time.perf_counter() - t)")
        out.append({"kind": "task regex", "pattern": pattern, "output": shape,
                    "chars": len(text), "seconds": round(best, 4), "python_re_seconds": old})
        print(f"  {pattern:28s} {shape:28s} {best:.4f} s (re: {old})", file=sys.stderr)
    from vbw.task.validity import Validators

    for pattern, shape, text in SCHEMA_PATTERNS:
        schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}
        best = min(_seconds(lambda: Validators().is_valid(schema, {"a": text}))
                   for _ in range(runs))
        old = _old_engine_seconds(
            "import time, jsonschema; t = time.perf_counter(); "
            f"jsonschema.Draft202012Validator({schema!r}).is_valid({{'a': {text!r}}}); "
            "print(time.perf_counter() - t)")
        out.append({"kind": "schema pattern", "pattern": pattern, "output": shape,
                    "chars": len(text), "seconds": round(best, 4), "python_re_seconds": old})
        print(f"  schema {pattern:21s} {shape:28s} {best:.4f} s (re: {old})", file=sys.stderr)
    return out


def _seconds(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def regex_task(dest: Path) -> Path:
    """The bundled GSM8K task with every hostile pattern as a regex step of its answer
    chain (reading the whole text) and a pattern on its answer schema's reasoning."""
    import yaml

    data = yaml.safe_load((ROOT / "conf/task/gsm8k.yaml").read_text())
    for key in ("path",):
        data["dataset"][key] = str((ROOT / "conf/task" / data["dataset"][key]).resolve())
    data["extract"]["free"] = [{"kind": "regex", "pattern": p, "max_chars": None}
                               for p, _, _ in REGEXES] + data["extract"]["free"]
    dest.write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def regex_replay(dest: Path) -> Path:
    """The bundled Qwen GSM8K replay, item j's unconstrained text the j-th hostile output."""
    lines = (ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl").read_text().splitlines()
    with open(dest, "w") as f:
        f.write(lines[0] + "\n")
        for j, line in enumerate(lines[1:]):
            rec = json.loads(line)
            if j < len(REGEXES) and "arms" in rec:
                rec["arms"]["unconstrained"]["text"] = REGEXES[j][2]
            f.write(json.dumps(rec) + "\n")
    return dest


def bench_regex_end_to_end(work: Path) -> dict:
    task, replay = regex_task(work / "t.yaml"), regex_replay(work / "r.jsonl")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vbw", f"task.files=[{task}]",
                           f"replay={replay}", f"hydra.run.dir={work}/o"], cwd=work,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"vbw failed on the hostile regex replay: {proc.stderr}")
    print(f"  end to end, user regexes: {wall:.2f} s", file=sys.stderr)
    return {"items": 200, "patterns": len(REGEXES), "hostile_outputs": len(REGEXES),
            "wall_s": round(wall, 2)}


def main_regexes() -> None:
    """VBW_BENCH_ONLY=regex: measure the regex rows only, into hostile.json's `regexes`
    (the other rows keep the figures measured with them)."""
    runs = int(os.environ.get("VBW_BENCH_RUNS", "3"))
    load_before = os.getloadavg()
    rows = bench_regexes(runs)
    with tempfile.TemporaryDirectory() as tmp:
        e2e = bench_regex_end_to_end(Path(tmp))
    result = json.loads(OUT.read_text()) if OUT.exists() else {}
    result["regexes"] = {"measured": time.strftime("%Y-%m-%d"), "runs": runs,
                         "load_average_1min": [round(load_before[0], 2),
                                               round(os.getloadavg()[0], 2)],
                         "old_cap_s": OLD_CAP_S, "rows": rows, "end_to_end": e2e}
    OUT.write_text(json.dumps(result, indent=1) + "\n")


# --- server deadlines and the reply cap (time bounds, not speed) ---------------------
# A hostile server (tests/generate/hostile.py) per shape; the figure is how long the
# server backend takes to give up with backend.timeout=DEADLINE and no retry, or, for
# the flood, to stop at the default 16 MiB cap. Bounds, so a loaded machine may run them.

DEADLINE = 2.0


def _server_shapes() -> list[tuple[str, str, Any, dict[str, Any]]]:
    from tests.generate.hostile import drip, flood, headers

    sse = headers(content_type="text/event-stream")
    return [
        ("POST, streamed", "`: ping` every 0.5 s, forever", lambda c, m, p, b, s: drip(
            c, sse, b": ping\n\n", 0.5, s), {}),
        ("POST, streamed", "an unterminated `data:` line, a byte every 0.1 s",
         lambda c, m, p, b, s: drip(c, sse + b"data: {", b"x", 0.1, s), {}),
        ("POST, plain", "a JSON body, one space every 0.1 s",
         lambda c, m, p, b, s: drip(c, headers(length=1 << 20) + b"{", b" ", 0.1, s),
         {"stream": False}),
        ("POST", "headers, a byte every 0.1 s",
         lambda c, m, p, b, s: drip(c, b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a", 0.1, s), {}),
        ("POST", "nothing at all", lambda c, m, p, b, s: s.wait(60), {}),
        ("POST, streamed", "a flood (SSE comments as fast as read)",
         lambda c, m, p, b, s: flood(c, sse, b": " + b"x" * 65534 + b"\n", s), {}),
        ("POST, plain", "a flood (one JSON string as fast as read)",
         lambda c, m, p, b, s: flood(c, headers() + b'{"a": "', b"x" * 65536, s),
         {"stream": False}),
    ]


def bench_server_deadlines() -> list[dict]:
    from tests.generate.hostile import Hostile, drip, elapsed, headers
    from vbw.config import OpenAIBackendConfig
    from vbw.generate.backend import GenerateConfig
    from vbw.generate.server.client import OpenAIServerBackend

    def backend(url: str, **extra: Any) -> OpenAIServerBackend:
        cfg = OpenAIBackendConfig(name="openai", base_url=url, model="m",
                                  dialect="llama_cpp_python", timeout=DEADLINE, max_retries=0,
                                  **extra)
        return OpenAIServerBackend(cfg, seed=1, env={})

    out = []
    ask = GenerateConfig(max_tokens=8)
    for request, shape, answer, extra in _server_shapes():
        with Hostile(answer) as srv:
            b = backend(srv.base_url, **extra)
            secs, err = elapsed(lambda: b.generate([{"role": "user", "content": "hi"}], ask))
        outcome = "deadline" if "backend.timeout" in str(err) else \
            "size cap" if "max_reply_bytes" in str(err) else f"UNEXPECTED: {err!r}"
        out.append({"request": request, "shape": shape, "outcome": outcome,
                    "bound_s": DEADLINE if outcome == "deadline" else None,
                    "seconds": round(secs, 2)})
        print(f"  server {shape:50s} {outcome:9s} {secs:.2f} s", file=sys.stderr)
    from vbw.generate import probe

    probe.PROBE_TIMEOUT = 1.0
    with Hostile(lambda c, m, p, b, s: drip(c, headers(length=1 << 20) + b"{", b" ", 0.1,
                                            s)) as srv:
        secs, _ = elapsed(backend(srv.base_url).describe)
    out.append({"request": "GET (5 probes)", "shape": "a JSON body, one space every 0.1 s",
                "outcome": "probes given up", "bound_s": 5 * probe.PROBE_TIMEOUT,
                "seconds": round(secs, 2)})
    print(f"  server probes: {secs:.2f} s", file=sys.stderr)
    return out


def main_server() -> None:
    """Only the server rows: hostile.json's other figures (speed) are left as measured."""
    result = json.loads(OUT.read_text()) if OUT.is_file() else {}
    result["server_deadlines"] = {"measured": time.strftime("%Y-%m-%d"),
                                  "deadline_s": DEADLINE, "rows": bench_server_deadlines()}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["server_deadlines"], indent=1))


def bench_round4() -> list[dict[str, Any]]:
    """Every case of tests/hostile4, end to end in a fresh process: its exit code, wall
    time and peak RSS against the bounds the case states (the tests assert the same)."""
    from tests.hostile4 import all_cases, run

    rows = []
    for case in all_cases():
        with tempfile.TemporaryDirectory() as tmp:
            got = run(case, Path(tmp))
        lines = len(got.stderr.strip().splitlines())
        ok = (got.rc == case.rc and lines == case.lines and got.seconds <= case.seconds
              and got.peak_rss_mb <= case.rss_mb and "Traceback" not in got.stderr)
        rows.append({"class": case.cls, "case": case.name, "exit": got.rc, "want_exit": case.rc,
                     "stderr_lines": lines, "seconds": round(got.seconds, 2),
                     "bound_s": case.seconds, "peak_rss_mib": round(got.peak_rss_mb),
                     "bound_mib": case.rss_mb, "ok": ok})
        print(f"  {case.id}: exit {got.rc}, {got.seconds:.2f} s, {got.peak_rss_mb:.0f} MiB"
              f"{'' if ok else '  <-- NOT AS WANTED'}", file=sys.stderr)
    return rows


def main_round4() -> None:
    """Only the round-4 rows, merged into hostile.json."""
    data = json.loads(OUT.read_text()) if OUT.is_file() else {}
    before = round(os.getloadavg()[0], 2)
    rows = bench_round4()
    data["round4"] = {"measured": time.strftime("%Y-%m-%d"),
                      "load_average_1min": [before, round(os.getloadavg()[0], 2)],
                      "rows": rows}
    OUT.write_text(json.dumps(data, indent=1) + "\n")


def main() -> None:
    if sys.argv[1:] == ["round4"]:
        main_round4()
        return
    if sys.argv[1:] == ["page"]:
        with tempfile.TemporaryDirectory() as tmp:
            page = bench_page_memory(Path(tmp))
        data = json.loads(OUT.read_text())
        data["page_memory"] = {**page, "measured": time.strftime("%Y-%m-%d"),
                               "load_average_1min": round(os.getloadavg()[0], 2)}
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        return
    if sys.argv[1:] == ["--server"]:
        main_server()
        return
    if os.environ.get("VBW_BENCH_ONLY") == "regex":
        return main_regexes()
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
    with tempfile.TemporaryDirectory() as tmp:
        result["regexes"] = {"measured": result["measured"], "runs": runs,
                             "load_average_1min": result["load_average_1min"],
                             "old_cap_s": OLD_CAP_S, "rows": bench_regexes(runs),
                             "end_to_end": bench_regex_end_to_end(Path(tmp))}
    for kept in ("server_deadlines", "round4"):  # measured by their own commands
        if OUT.is_file() and kept in json.loads(OUT.read_text()):
            result[kept] = json.loads(OUT.read_text())[kept]
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
