"""The tokenizer conformance walks (a conf/model name or any GGUF) and each engine of a
run's `conformance` block over a list of schemas."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

from vbw.config import ConformanceConfig, ModelConfig, bundled_model
from vbw.errors import VbwError
from vbw.generate.engines.base import Engine
from vbw.generate.conformance.run import check_cases
from vbw.generate.conformance.walk import Tokens
from vbw.resources import bundled
from vbw.score.conformance import EngineReport, engine_report
from vbw.task.conformance import Case


def open_tokenizer(name_or_path: str) -> tuple[Tokens, dict[str, Any]]:
    """The tokenizer of a conf/model name or a GGUF path (its weights load, unused).

    Args:
        name_or_path: `conformance.tokenizer`.
    Returns:
        The tokenizer and what report.json says of its model.
    """
    from vbw.generate.model import resolve_model
    from vbw.generate.runtime import Runtime

    if (bundled("conf") / "model" / f"{name_or_path}.yaml").is_file():
        spec = bundled_model(name_or_path)
    else:
        stem = "".join(c if c.isalnum() or c in "_.-" else "_" for c in Path(name_or_path).stem)
        spec = ModelConfig(name=stem or "model", path=name_or_path, repack="off")
    mf = resolve_model(spec)
    runtime = Runtime(mf.path, n_ctx=256, n_threads=1, repack=False)
    return Tokens(runtime), {"name": spec.name, "file": mf.file, "sha256": mf.sha256}


def ready(engine: Engine) -> Engine:
    """`engine` with its vocabulary built (here once, not in every schema's child)."""
    if hasattr(engine, "vocabulary"):
        engine.vocabulary()
    return engine


def reference(tok: Tokens, whitespace: str) -> Engine | None:
    """The engine whose cut names where an accepted invalid instance went wrong:
    llguidance (no invalid instance accepted on the suite), None if it cannot be built."""
    from vbw.generate.engines import make_engine

    try:
        return ready(make_engine("llguidance", tok.runtime, True, whitespace))  # type: ignore[arg-type]
    except VbwError:
        return None


def engine_run(name: str, whitespace: str, cases: list[Case], tok: Tokens, seconds: float,
               ref: Engine | None, timed: bool = True) -> EngineReport:
    """One engine in one whitespace policy over `cases` (its vocabulary built here once,
    not in every schema's child); `ref`: the reference engine (`reference`)."""
    from vbw.generate.engines import make_engine

    engine = ready(make_engine(name, tok.runtime, True, whitespace))  # type: ignore[arg-type]
    start = time.perf_counter()
    outcomes, masks, wrong = check_cases(engine, cases, tok, seconds, timed=timed,
                                         reference=ref)
    return engine_report(name, whitespace, outcomes, masks, wrong, time.perf_counter() - start)


def run_engines(cases: list[Case], cfg: ConformanceConfig, tok: Tokens,
                err: TextIO | None) -> list[EngineReport]:
    """Each engine of `cfg` in each whitespace policy over `cases`.

    Args:
        cases: the schemas and their instances.
        cfg: the run's `conformance` block.
        tok: the model's tokenizer.
        err: where a line per engine goes (None: nowhere).
    Returns:
        One EngineReport per (engine, whitespace), in that order.
    """
    out = []
    refs = {ws: reference(tok, ws) for ws in cfg.whitespace}  # one per policy, not per run
    for name in cfg.engines:
        for ws in cfg.whitespace:
            report = engine_run(name, ws, cases, tok, cfg.schema_seconds, refs[ws])
            out.append(report)
            if err is not None:
                a = report.all
                print(f"conformance: {report.label}: {a.compiled} of {a.schemas} schemas "
                      f"compile, {a.sound} sound, {a.exact} exact ({report.seconds:.1f} s)",
                      file=err, flush=True)
    return out
