"""The pipeline behind the CLI: task -> (generate) -> replay -> score -> report.

Scoring reads only a replay and a task; live generation is imported lazily, so replay
mode never touches the live stack. `mode=auto` (the default) re-scores a recorded replay
when there is one and generates otherwise, saying which in one line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ConfigError, ReplayError, VbwError
from vbw.replay.stream import ReplayStream, open_replay
from vbw.replay.io import bundled_key, engine_shown, no_replay_message
from vbw.report import write_reports
from vbw.report.browser import Browser, build_browser
from vbw.report.checkup import render_check
from vbw.report.numbers import pct
from vbw.report.provenance import provenance
from vbw.resources import bundled
from vbw.score.metrics import build_report
from vbw.score.model import Report, TaskCheck
from vbw.score.stream import check_replay_matches, score_stream
from vbw.task.arms import Arm
from vbw.task.audit import Audit, audit, audit_or_fail, first_error, warn_findings
from vbw.task.runner import Task



def task_check(result: Audit) -> TaskCheck:
    """report.json's `task_check`: what the checks found on the scored items."""
    return TaskCheck(gold_checked=result.gold_checked, warnings=result.warnings,
                     findings=result.findings, not_checked=result.not_checked)


def score(task: Task, replay: ReplayStream, cfg: RunConfig, mode: str, err: TextIO) -> Report:
    """Score a replay as it is read (vbw.score.stream): ids checked against the task, the
    task checked on the items it holds, states per item and arm, then the report. The
    checks' warnings are printed here, once (a live run's checks, before generating,
    print nothing but a problem)."""
    arms = cfg.arms.select(task.name, task.schema_names, task.spec.answer_schema)
    scored = score_stream(task, replay, arms, cfg.n, err, cfg.shard.take)
    states = scored.states
    if not states.ids:
        first = states.excluded[0] if states.excluded else ""
        reason = " ".join(states.excluded_reasons.get(first, "").split())[:500]
        why = f": every held item is excluded, e.g. {first}: {reason}" if first else ""
        raise ReplayError(f"{replay.path}: no item of task {task.name} can be scored (held: "
                          f"{len(states.excluded)}, excluded: {len(states.excluded)}){why}")
    warn_findings(scored.audit, err)  # after any refusal, which stays one line
    if replay.torn_tail:
        print(f"vbw: warning: {replay.path} ends in a partly written line (ignored)", file=err)
    report = build_report(states, task=task.name, label=task.spec.label, mode=mode,
                          meta=replay.meta_as_written, source=str(replay.path),
                          provenance=provenance(replay.header, scored.timings, scored.end),
                          seed=cfg.bootstrap.seed, resamples=cfg.bootstrap.resamples,
                          n_task=scored.n_task, missing=scored.missing)
    return report.model_copy(update={"task_check": task_check(scored.audit)})


def browser(report: Report, task: Task, replay_path: Path, cfg: RunConfig) -> Browser:
    """report.html's item data: a second pass over the replay, keeping only the (cut)
    texts of the items the report holds."""
    stream = open_replay(replay_path)
    arms = cfg.arms.select(task.name, task.schema_names, task.spec.answer_schema)
    return build_browser(report, task, stream.header, (obj for _, obj in stream.lines()), arms)


def tripped_arms(report: Report, arms: list[Arm], threshold: float) -> list[str]:
    """constrained[*] arms whose wrong-but-valid rate exceeds the threshold
    (reason_then_constrain is not gated: its packaging turn is a different contract)."""
    out = []
    for arm in arms:
        rate = report.arms[arm.key].wrong_but_valid
        if arm.kind == "constrained" and rate is not None and rate.rate > threshold:
            out.append(f"{arm.key} ({pct(rate.rate)})")
    return out


def check_tasks(tasks: list[Task], n: int | None, out: TextIO) -> int:
    """mode=check: every task's checks, the first item's prompts, schema and gold. It
    fails (exit 2) on a problem and on a finding that holds on every item."""
    failed: list[Audit] = []
    for task in tasks:
        items = task.items(n)
        result = audit(task, items)
        print(render_check(task, items[0] if items else None, result), file=out)
        if result.check_problems:
            failed.append(result)
    if failed:
        raise ConfigError(first_error(failed[0], check_mode=True))
    return 0


def model_and_engine(cfg: RunConfig) -> tuple[str, str]:
    """What keys a recorded replay, as the backend kind says (BackendSettings.replay_key):
    the model's name and the engine (`<engine>-compact` under compact whitespace); for a
    server, the served model id (made safe as a folder name) and `server-<dialect>`."""
    return cfg.backend.replay_key(cfg.model, cfg.engine)


def recorded_key(cfg: RunConfig, task: Task) -> str:
    model, engine = model_and_engine(cfg)
    return f"{task.name} x {model} x {engine_shown(engine)}"


def _recorded(task: Task, cfg: RunConfig, cwd: Path) -> Path | None:
    """The recorded replay for task x model x engine: under `replays_dir` first (the
    user's), then among the bundled ones, so one sweep can mix both kinds of task."""
    key = bundled_key(task.name, *model_and_engine(cfg))
    for root in _replay_roots(cfg, cwd):
        if (root / key).is_file():
            return root / key
    return None


def _replay_roots(cfg: RunConfig, cwd: Path) -> list[Path]:
    roots = [bundled("replays")]
    if cfg.replays_dir:
        user = Path(cfg.replays_dir).expanduser()
        roots.insert(0, user if user.is_absolute() else cwd / user)
    return roots


def _live(task: Task, cfg: RunConfig, task_dir: Path, err: TextIO,
          unrecorded: str | None = None) -> Path:
    """Check the task, find the model, then generate. `unrecorded` (auto mode) names the
    task x model x engine without a replay: announced once the run can start, and put
    in front of any error that stops it from starting."""
    from vbw.generate.live import generate  # the live stack, only when asked for
    from vbw.generate.providers import prepare

    items = task.items(cfg.n)
    audit_or_fail(task, items, None)  # its warnings are printed once, when scoring
    try:
        model = prepare(cfg.backend, cfg.model)
    except VbwError as e:
        if unrecorded is None:
            raise
        raise type(e)(f"no recorded replay for {unrecorded}, and live generation cannot "
                      f"start: {e}") from None
    if unrecorded is not None:
        print(f"vbw: no recorded replay for {unrecorded}: generating live; mode=replay only "
              "re-scores", file=err)
    return generate(task, items, cfg, task_dir, model, err=err)


def obtain_replay(task: Task, cfg: RunConfig, cwd: Path, task_dir: Path, out: TextIO,
                  err: TextIO) -> tuple[Path, str]:
    """(replay path, "replay" or "live") per the mode: see the module docstring."""
    if cfg.mode == "live":
        return _live(task, cfg, task_dir, err), "live"
    if cfg.mode == "merge":
        from vbw.sweep.shards import merged_replay

        return merged_replay(task, cfg.replays, cfg.n, cwd, task_dir), "replay"
    if cfg.replay is not None:
        p = Path(cfg.replay).expanduser()
        return (p if p.is_absolute() else cwd / p), "replay"
    found = _recorded(task, cfg, cwd)
    if found is not None:
        if cfg.mode == "auto":
            print(f"vbw: {task.name}: re-scoring the recorded replay {found} (mode=live "
                  "generates anew)", file=out)
        return found, "replay"
    if cfg.mode == "replay":
        raise ReplayError(no_replay_message(_replay_roots(cfg, cwd), task.name,
                                            *model_and_engine(cfg)))
    return _live(task, cfg, task_dir, err, recorded_key(cfg, task)), "live"


def _check_shard(cfg: RunConfig, tasks: list[Task]) -> None:
    """A shard is part of a live run of one task; mode=merge joins the parts."""
    if cfg.shard.count > 1 and cfg.mode != "live":
        raise ConfigError(f"shard.count={cfg.shard.count} splits a live run: pass mode=live "
                          f"(mode={cfg.mode} would not generate)")
    if cfg.shard.count > 1 and len(tasks) > 1:
        raise ConfigError(f"shard.count={cfg.shard.count}: a sharded run is of one task, but "
                          f"task selects {len(tasks)}; sweep them, e.g. -m task=gsm8k,bfcl_simple")
    if cfg.mode == "merge" and len(tasks) > 1:
        raise ConfigError(f"mode=merge joins the shards of one task, but task selects "
                          f"{len(tasks)}; choose one, e.g. task=gsm8k")


def run(cfg: RunConfig, tasks: list[Task], out_dir: Path, cwd: Path,
        out: TextIO = sys.stdout, err: TextIO = sys.stderr,
        job: str | None = None) -> int:
    """Check, score (and first generate where needed) every task; return the exit code.
    `job` names the sweep job in the gate message. A shard job is not gated: its slice is
    not the run; the merged run is."""
    if cfg.replay is not None and len(tasks) > 1:
        raise ConfigError(f"replay={cfg.replay} names one file but task selects "
                          f"{len(tasks)} tasks; choose one, e.g. task=gsm8k")
    _check_shard(cfg, tasks)
    if cfg.replays is not None and cfg.mode not in ("compare", "merge"):
        raise ConfigError(f"replays=[{','.join(cfg.replays)}] is read by mode=compare and "
                          f"mode=merge only (mode={cfg.mode}); to score one file pass "
                          "replay=PATH")
    for task in tasks:  # arms.schemas names schemas of every task: refused before any work
        cfg.arms.select(task.name, task.schema_names, task.spec.answer_schema)
    if cfg.mode == "compare":
        from vbw.comparing import run_compare  # mode=compare: its own module
        return run_compare(cfg, tasks, out_dir, cwd, out, err)
    if cfg.mode == "check":
        return check_tasks(tasks, cfg.n, out)
    tripped: list[str] = []
    dirs = []
    for task in tasks:
        task_dir = out_dir / task.name if len(tasks) > 1 else out_dir
        replay_path, mode = obtain_replay(task, cfg, cwd, task_dir, out, err)
        replay = open_replay(replay_path)
        try:
            check_replay_matches(replay, task, cfg.allow_task_mismatch)
        except ReplayError:
            replay.drain()  # a bad line anywhere in the file is reported first
            raise
        if cfg.mode == "merge":  # scored over the whole run's selection
            cfg = cfg.model_copy(update={"n": replay.header.n})
        report = score(task, replay, cfg, mode, err)
        md = write_reports(report, task_dir, lambda: browser(report, task, replay_path, cfg),
                           cfg.outputs, err=err)
        print(md, file=out)
        dirs.append(task_dir)
        if cfg.gate.wrong_valid_above is not None and cfg.shard.count == 1:
            arms = cfg.arms.select(task.name, task.schema_names, task.spec.answer_schema)
            tripped += [f"{task.name}: {a}" for a in
                        tripped_arms(report, arms, cfg.gate.wrong_valid_above)]
    if tripped:
        in_job = f" in {job}" if job else ""
        print(f"vbw: gate tripped{in_job} (wrong-but-valid above {cfg.gate.wrong_valid_above}): "
              + "; ".join(tripped), file=err)
    where = dirs[0] if len(dirs) == 1 else out_dir
    print(f"Reports written to {where}", file=out)
    return 1 if tripped else 0
