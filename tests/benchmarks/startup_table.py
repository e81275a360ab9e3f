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
         "jinja2": "Jinja2", "yaml": "PyYAML", "vbw": "vbw itself",
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
            ("the same, CPU s (user + system)", ("demo", "median_cpu_s"), _s),
            ("the same, peak RSS (MiB)", ("demo", "peak_rss_mib"), _ms),
            ("`import vbw.cli, vbw.app` (wall s)", ("imports", "import_vbw_s"), _s),
            ("bare interpreter, `python -c pass` (wall s)", ("imports", "bare_python_s"), _s)]
    for label, path, fmt in rows:
        lines.append(f"| {label} | {_cell(_get(d, *path), _get(p, *path), fmt)} |")
    verdict = "met" if demo["median_wall_s"] <= d["target_s"] else "not met"
    lines += ["", f"Target: both demos in at most {d['target_s']} s as a fresh process: "
              f"**{verdict}** ({demo['median_wall_s']:.2f} s).", "",
              "Import budget of one `vbw` run, from `python -X importtime -m vbw`: each "
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
    lines += ["", "Where one run's time goes (wall ms around each step inside the process; "
              "the steps under Hydra's job run inside it, and a composition counts in "
              "every step that asks for one):", "", "| step | ms |", "|---|---|"]
    for step, now in d["phases_ms"].items():
        lines.append(f"| {step} | {_cell(now, _get(p, 'phases_ms', step), _ms)} |")
    return "\n".join(lines)
