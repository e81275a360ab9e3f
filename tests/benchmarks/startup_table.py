"""The README's start-up block, from tests/benchmarks/startup.json and, beside each figure,
startup.previous.json (the same measurement of the revision before the start-up work)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
NOW, WAS = HERE / "startup.json", HERE / "startup.previous.json"
NAMES = {"hydra": "hydra-core", "omegaconf": "omegaconf", "pydantic": "pydantic",
         "numpy": "NumPy", "jsonschema": "jsonschema", "jmespath": "jmespath",
         "jinja2": "Jinja2", "yaml": "PyYAML", "orjson": "orjson",
         "jsonschema_rs": "jsonschema-rs", "re2": "google-re2", "vbw": "vbw itself",
         "other": "the rest (interpreter start, standard library)"}


def _get(d: dict | None, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _cell(now: Any, was: Any, fmt: Callable[[Any], str]) -> str:
    """`new (was old)`; a figure the previous run did not measure stands alone."""
    if now is None:
        return "n/a"
    return fmt(now) if was is None else f"{fmt(now)} (was {fmt(was)})"


def _s(x: float) -> str:
    return f"{x:.2f}"


def _ms(x: float) -> str:
    return f"{x:.0f}"


def _x(x: float) -> str:
    return f"{x:.2f}x"


def _not_in_floor(d: dict) -> str:
    extra = _get(d, "imports", "not_in_floor")
    if not extra:
        return " (every third-party package the run imports is in it)"
    return f" (the run also imports {', '.join(extra)}, which the floor leaves out)"


def verdict(d: dict) -> str:
    """The target's one line: met or missed, and what bounds the rest (the steps of one
    run, in process, largest first, beside the floor)."""
    demo, target = d["demo"], d.get("target_ratio")
    if target is None or "floor" not in demo:
        return ("Target (issue 22): both demos in at most 2x the floor: not measured "
                "(these figures predate the floor; rerun `python -m "
                "tests.benchmarks.bench_startup`).")
    ratio, floor = demo["ratio_wall"], demo["floor"]["median_wall_s"]
    head = (f"Target (issue 22): both demos as a fresh process in at most {target:g}x the "
            f"floor: **{'met' if ratio <= target else 'missed'}** ({ratio:.2f}x: "
            f"{demo['median_wall_s']:.2f} s against {floor:.2f} s)")
    timeline = d.get("timeline_ms")
    if timeline:  # what bounds the run: the later of the two sides, then the job
        handed, ready, back = list(timeline.values())[:3]
        later = "the warm worker's imports" if ready >= handed else \
            "composing the command line and setting up Hydra's job"
        return (f"{head}. What bounds it (the moments below): {later}, done "
                f"{max(handed, ready):.0f} ms after the start (the other side at "
                f"{min(handed, ready):.0f} ms), then the job itself, "
                f"{back - max(handed, ready):.0f} ms with the two tasks on two cores (its "
                "steps are in the one-process table below).")
    phases = d.get("phases_ms", {})
    steps = sorted(((ms, k) for k, ms in phases.items()
                    if k not in ("total in process", "Hydra's job (run_job, vbw inside it)",
                                 "every composition (Hydra's loader)")), reverse=True)[:3]
    beyond = demo["median_wall_s"] - floor
    bounds = "; ".join(f"{k} {ms:.0f} ms" for ms, k in steps)
    return (f"{head}. vbw's share beyond the floor is {beyond:.2f} s; the largest steps of "
            f"a run (wall, in process, dependencies' imports included in `import vbw`): "
            f"{bounds}.")


def startup_table() -> str:
    d = json.loads(NOW.read_text(encoding="utf-8"))
    p = json.loads(WAS.read_text(encoding="utf-8")) if WAS.is_file() else None
    m, demo = d["machine"], d["demo"]
    lines = [f"Measured {d['measured']} on {m['cores']} cores ({m['cpu']}, Python "
             f"{m['python']}; 1-minute load average {d['load_1min'][0]} before, "
             f"{d['load_1min'][1]} after) by `python -m tests.benchmarks.bench_startup`, every "
             f"figure a median of {demo['runs']} fresh processes (`python -m vbw`, bytecode "
             "cached as a pip install has it)"
             + (f"; \"was\" is the same script on revision `{p['revision']}` "
                f"(`--previous {p['revision']}`), measured {p['measured']} (load "
                f"{p['load_1min'][0]} before, {p['load_1min'][1]} after)" if p else "") + ":",
             "", "| what | now |", "|---|---|"]
    rows = [("`vbw`: both demo replays re-scored, reports written (wall s)",
             ("demo", "median_wall_s"), _s),
            ("the floor: a fresh interpreter that only imports the dependencies (wall s)",
             ("demo", "floor", "median_wall_s"), _s),
            ("**the demo over the floor (wall)**", ("demo", "ratio_wall"), _x),
            ("the demo, CPU s (user + system)", ("demo", "median_cpu_s"), _s),
            ("the floor, CPU s", ("demo", "floor", "median_cpu_s"), _s),
            ("the demo over the floor (CPU)", ("demo", "ratio_cpu"), _x),
            ("the demo with an empty cache folder, a first run ever (wall s)",
             ("demo", "cold_cache", "median_wall_s"), _s),
            ("the same over the floor (wall)", ("demo", "cold_cache", "ratio_wall"), _x),
            ("the demo, peak RSS (MiB)", ("demo", "peak_rss_mib"), _ms),
            ("the floor, peak RSS (MiB)", ("demo", "floor", "peak_rss_mib"), _ms),
            ("`import vbw.cli.command, vbw.cli.job` (wall s)", ("imports", "import_vbw_s"), _s),
            ("bare interpreter, `python -c pass` (wall s)", ("imports", "bare_python_s"), _s)]
    for label, path, fmt in rows:
        lines.append(f"| {label} | {_cell(_get(d, *path), _get(p, *path), fmt)} |")
    if "floor_imports" in d:
        lines += ["", f"The floor is `python -c \"{d['floor_imports']}\"`"
                  + _not_in_floor(d) + "."]
    lines += ["", verdict(d), ""]
    if d.get("timeline_ms"):
        lines += ["A plain run with the warm worker (vbw/cli/warm_worker.py), as the console "
                  "script runs it: when each moment comes, ms after the start of `vbw.__main__` "
                  "(vbw.cli.console forks the worker first thing; the two sides then import "
                  "at once), "
                  f"medians of {demo['runs']} further runs of their own (measured after the "
                  "demo's, so their end need not match its median):", "",
                  "| moment | ms |", "|---|---|"]
        for moment, now in d["timeline_ms"].items():
            lines.append(f"| {moment} | {_cell(now, _get(p, 'timeline_ms', moment), _ms)} |")
        lines.append("")
    lines += ["Import budget of one `vbw` run in one process (`VBW_WARM=0`), from "
              "`python -X importtime -m vbw`: each "
              "module's own import time is charged to the nearest module that imported it "
              "and belongs to a dependency (or to vbw); \"alone\" imports the dependency "
              "by itself in a fresh process, minus the bare interpreter (so shared standard "
              "library modules count in both):", "",
              "| dependency | in a `vbw` run (ms) | alone (ms) |", "|---|---|---|"]
    for dep, name in NAMES.items():
        now, was = _get(d, "imports", "per_dependency", dep), \
            _get(p, "imports", "per_dependency", dep)
        alone = _cell(_get(now, "alone_ms"), _get(was, "alone_ms"), _ms) \
            if _get(now, "alone_ms") is not None else ""
        lines.append(f"| {name} | {_cell(_get(now, 'in_vbw_ms'), _get(was, 'in_vbw_ms'), _ms)} "
                     f"| {alone} |")
    total = _cell(_get(d, "imports", "median_total_ms"), _get(p, "imports", "median_total_ms"),
                  _ms)
    lines.append(f"| total | {total} | |")
    lines += ["", "Where one run's time goes in one process (`VBW_WARM=0`; wall ms around "
              "each step inside the process; "
              "the steps under Hydra's job run inside it, and a composition counts in "
              "every step that asks for one):", "", "| step | ms |", "|---|---|"]
    for step, now in d["phases_ms"].items():
        lines.append(f"| {step} | {_cell(now, _get(p, 'phases_ms', step), _ms)} |")
    return "\n".join(lines)
