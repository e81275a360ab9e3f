"""The pipeline behind the CLI: task -> (generate) -> replay -> score -> report.

Scoring reads only a replay and a task; live generation is imported lazily, so replay
mode never touches the live stack.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ConfigError, ReplayError
from vbw.replay import Replay, locate_replay, read_replay
from vbw.report import write_reports
from vbw.report.provenance import provenance
from vbw.resources import bundled
from vbw.score.metrics import build_report
from vbw.score.model import Report
from vbw.score.states import score_items
from vbw.task.arms import task_arms
from vbw.task.runner import Task, load_task


def resolve_task_file(entry: str, cwd: Path) -> Path:
    """A task entry is a bundled task name (tasks/<name>.yaml) or a path to a YAML file."""
    p = Path(entry).expanduser()
    if p.suffix in (".yaml", ".yml"):
        p = p if p.is_absolute() else cwd / p
        if not p.is_file():
            raise ConfigError(f"task.files: task file not found: {p}")
        return p
    candidate = bundled("tasks") / f"{entry}.yaml"
    if candidate.is_file():
        return candidate
    names = sorted(f.stem for f in bundled("tasks").glob("*.yaml"))
    raise ConfigError(f"task.files: unknown task {entry!r}; bundled tasks: {', '.join(names)}"
                      " (or give a path ending in .yaml)")


def _same_task(a: str | None, b: str) -> bool:
    return a is not None and a.replace("-", "_") == b.replace("-", "_")


def check_replay_matches(replay: Replay, task: Task, allow_mismatch: bool) -> None:
    """The replay is of this task; with a recorded task hash, of this version of it (a
    replay without one is scored, and its report says the version was not verified)."""
    header = replay.header
    if not _same_task(header.task, task.name):
        raise ReplayError(f"{replay.path}: meta.task is {header.task!r}, not {task.name!r}")
    if header.task_hash is not None and header.task_hash != task.generation_hash() \
            and not allow_mismatch:
        raise ReplayError(f"{replay.path}: meta.task_hash differs from task {task.path} (its "
                          "prompts, schemas or data changed since generation); pass "
                          "allow_task_mismatch=true to score it anyway")


def score(task: Task, replay: Replay, cfg: RunConfig, mode: str, err: TextIO) -> Report:
    items = task.items(cfg.n, only={r.id for r in replay.records})
    arms = task_arms(task.schema_names, task.spec.answer_schema, cfg.arms.kinds)
    states = score_items(task, items, replay, arms)
    held = len(states.ids) + len(states.excluded)
    if cfg.n is not None and held < cfg.n:
        print(f"vbw: warning: n={cfg.n} but {replay.path} holds {held} of those items; "
              f"scoring {held}", file=err)
    if replay.torn_tail:
        print(f"vbw: warning: {replay.path} ends in a partly written line (ignored)", file=err)
    return build_report(states, task=task.name, label=task.spec.label, mode=mode,
                        meta=replay.meta_as_written, source=replay.path,
                        provenance=provenance(replay.header, replay.records, replay.end),
                        seed=cfg.bootstrap.seed, resamples=cfg.bootstrap.resamples)


def tripped_arms(report: Report, threshold: float) -> list[str]:
    """constrained[*] arms whose wrong-but-valid rate exceeds the threshold."""
    return [f"{k} ({100 * m.wrong_but_valid.rate:.1f}%)" for k, m in report.arms.items()
            if k.startswith("constrained[") and m.wrong_but_valid is not None
            and m.wrong_but_valid.rate > threshold]


def run(cfg: RunConfig, out_dir: Path, cwd: Path, out: TextIO = sys.stdout,
        err: TextIO = sys.stderr) -> int:
    """Score (and in live mode first generate) every selected task; return the exit code."""
    tasks = [load_task(resolve_task_file(e, cwd)) for e in cfg.task.files]
    if cfg.replay is not None and len(tasks) > 1:
        raise ConfigError(f"replay={cfg.replay} names one file but task selects "
                          f"{len(tasks)} tasks; choose one, e.g. task=gsm8k")
    tripped: list[str] = []
    dirs = []
    for task in tasks:
        task_dir = out_dir / task.name if len(tasks) > 1 else out_dir
        if cfg.mode == "live":
            from vbw.generate.live import generate  # the live stack, only when asked for

            replay_path = generate(task, cfg, task_dir, err=err)
        elif cfg.replay is not None:
            p = Path(cfg.replay).expanduser()
            replay_path = p if p.is_absolute() else cwd / p
        else:
            root = Path(cfg.replays_dir) if cfg.replays_dir else bundled("replays")
            replay_path = locate_replay(root, task.name, cfg.model.name, cfg.engine.name)
        replay = read_replay(replay_path)
        check_replay_matches(replay, task, cfg.allow_task_mismatch)
        report = score(task, replay, cfg, cfg.mode, err)
        md = write_reports(report, task_dir)
        print(md, file=out)
        dirs.append(task_dir)
        if cfg.gate.wrong_valid_above is not None:
            tripped += [f"{task.name}: {a}" for a in
                        tripped_arms(report, cfg.gate.wrong_valid_above)]
    if tripped:
        print(f"vbw: gate tripped (wrong-but-valid above {cfg.gate.wrong_valid_above}): "
              + "; ".join(tripped), file=err)
    where = dirs[0] if len(dirs) == 1 else out_dir
    print(f"Reports written to {where}", file=out)
    return 1 if tripped else 0
