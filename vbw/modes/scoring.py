"""What every mode that ends in one report per task shares (auto, replay, live, merge):
obtain each task's replay as the mode says, check it is the task's, score it as it is
read, write the reports and apply the wrong-but-valid gate.

Scoring reads only a replay and a task, so replay scoring never touches the live stack.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ReplayError
from vbw.modes import Job
from vbw.replay.stream import ReplayStream, open_replay
from vbw.report import write_reports
from vbw.report.browser import Browser, build_browser
from vbw.report.numbers import pct
from vbw.report.provenance import provenance
from vbw.score.metrics import build_report
from vbw.score.model import Report, TaskCheck
from vbw.score.stream import check_replay_matches, score_stream
from vbw.task.arms import Arm
from vbw.task.audit import Audit, warn_findings
from vbw.task.runner import Task

# (task, its report folder) -> (replay path, "replay" or "live": the report's mode)
Obtain = Callable[[Task, Path], tuple[Path, str]]


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


def score_tasks(job: Job, obtain: Obtain, whole_run: bool = False) -> int:
    """Score (after `obtain` has found or made its replay) every task; return the exit
    code. `whole_run`: the replay is a merged run, scored over its header's selection (n),
    not the command line's. A shard job is not gated: its slice is not the run; the merged
    run is."""
    cfg, out, err = job.cfg, job.out, job.err
    tripped: list[str] = []
    dirs = []
    for task in job.tasks:
        task_dir = job.out_dir / task.name if len(job.tasks) > 1 else job.out_dir
        replay_path, mode = obtain(task, task_dir)
        replay = open_replay(replay_path)
        try:
            check_replay_matches(replay, task, cfg.allow_task_mismatch)
        except ReplayError:
            replay.drain()  # a bad line anywhere in the file is reported first
            raise
        if whole_run:
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
        in_job = f" in {job.name}" if job.name else ""
        print(f"vbw: gate tripped{in_job} (wrong-but-valid above {cfg.gate.wrong_valid_above}): "
              + "; ".join(tripped), file=err)
    where = dirs[0] if len(dirs) == 1 else job.out_dir
    print(f"Reports written to {where}", file=out)
    return 1 if tripped else 0
