"""What every mode that ends in one report per task shares (auto, replay, live, merge):
obtain each task's replay as the mode says, check it is the task's, score it as it is
read, write the reports and apply the wrong-but-valid gate.

Scoring reads only a replay and a task, so replay scoring never touches the live stack.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple, TextIO, TypeVar

from vbw import parallel
from vbw.config import Bootstrap, Shard
from vbw.errors import ReplayError, VbwError
from vbw.modes import Job
from vbw.replay.stream import ReplayStream, open_replay
from vbw.report import write_reports
from vbw.report.browser import SHOWING
from vbw.report.numbers import pct
from vbw.report.pagedata import ItemData
from vbw.report.provenance import provenance
from vbw.report.writers import HtmlOutput, chosen, report_files, written_line
from vbw.score import split
from vbw.score.answers import AnswerParts, closed_after
from vbw.score.metrics import build_report
from vbw.score.results import Report, TaskCheck, TaskMismatch
from vbw.score.shown import Showing
from vbw.score.replaycheck import check_replay_matches
from vbw.score.stream import Scored, score_stream
from vbw.score.written import Written
from vbw.task.arms import Arm
from vbw.task.audit import warn_findings
from vbw.task.findings import Audit
from vbw.task.runner import Task

T = TypeVar("T")


class Obtained(NamedTuple):
    """A task's replay as a mode obtained it: its path, the report's mode ("replay" or
    "live"), and its records' scoring pass if they were scored as they were written
    (vbw.score.written: mode=merge), else None."""

    path: Path
    mode: str
    written: Written | None = None


# (task, its report folder, where a note goes: stderr) -> (replay path, mode[, written pass])
Obtain = Callable[[Task, Path, TextIO], "tuple[Path, str] | Obtained"]


def task_check(result: Audit) -> TaskCheck:
    """report.json's `task_check`: what the checks found on the scored items."""
    return TaskCheck(gold_checked=result.gold_checked, warnings=result.warnings,
                     findings=result.findings, not_checked=result.not_checked)


def score(task: Task, replay: ReplayStream, arms: list[Arm], mode: str, err: TextIO, *,
          n: int | None, shard: Shard, bootstrap: Bootstrap,
          scored_hook: Callable[[Scored], None] | None = None,
          showing: Showing = Showing(), written: Written | None = None,
          made_for: int | None = None) -> tuple[Report, AnswerParts | None]:
    """Score a replay as it is read (vbw.score.stream) over the task's `arms` and its
    first `n` items (this `shard` of them): ids checked against the task, the task checked
    on the items it holds, states per item and arm, then the report (its CIs drawn as
    `bootstrap` says). The
    checks' warnings are printed here, once (a live run's checks, before generating,
    print nothing but a problem). `scored_hook` gets the pass's outcome before the report
    is built from it; `showing`: see vbw.score.stream.score_stream; `written`: the
    replay's records scored as they were written (Obtained.written), not read again;
    `made_for`: the replay's own n, beyond which an item it lacks is not missing.
    Returns the report and answers.csv's rows (the caller's to write, within a
    vbw.score.answers.closed_after block, which removes them)."""
    if written is not None:
        replay.end = written.end
    scored = score_stream(task, replay, arms, n, err, shard.take,
                          showing=showing,
                          given=None if written is None else written.p, made_for=made_for,
                          answers=True)
    return _report(task, replay, mode, err, scored, bootstrap, scored_hook), scored.answers


def _report(task: Task, replay: ReplayStream, mode: str, err: TextIO, scored: Scored,
            bootstrap: Bootstrap, scored_hook: Callable[[Scored], None] | None) -> Report:
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
    if scored_hook is not None:
        scored_hook(scored)
    report = build_report(states, task=task.name, label=task.spec.label, mode=mode,
                          meta=replay.meta_as_written, source=str(replay.path),
                          provenance=provenance(replay.header, scored.timings, scored.end),
                          seed=bootstrap.seed, resamples=bootstrap.resamples,
                          n_task=scored.n_task, missing=scored.missing)
    return report.model_copy(update={"task_check": task_check(scored.audit)})


def mismatch_line(path: Path, task: Task, m: TaskMismatch) -> str:
    """The warning of a replay scored although its task hash differs (one line)."""
    return (f"vbw: warning: {path}: meta.task_hash {m.replay_task_hash[:12]}... differs from "
            f"task {task.name}'s {m.task_hash[:12]}... ({task.path}); scored anyway, as "
            "allow_task_mismatch=true asks: its texts may come from other prompts, schemas "
            "or data")


def _read_ahead(task: Task, hashed: bool) -> None:
    """Read the task's rows while a thread hashes its data files for the replay's check
    (`hashed`: the replay records a task hash): both read the same files, and the hash
    runs outside the interpreter lock, so on two cores it costs nothing. An error is
    left for the step that needs the rows or the hash to raise, in its usual order."""
    def hash_quietly() -> None:
        try:
            task.generation_hash()
        except Exception:  # noqa: BLE001  (raised again when the check asks for it)
            pass

    thread = threading.Thread(target=hash_quietly) if hashed else None
    if thread is not None:
        thread.start()
    try:
        task.rows()
    except VbwError:
        pass  # (raised again when scoring asks for them)
    finally:
        if thread is not None:
            thread.join()


def tripped_arms(report: Report, arms: list[Arm], threshold: float) -> list[str]:
    """constrained[*] arms whose wrong-but-valid rate exceeds the threshold
    (reason_then_constrain is not gated: its packaging turn is a different contract)."""
    out = []
    for arm in arms:
        rate = report.arms[arm.key].wrong_but_valid
        if arm.kind == "constrained" and rate is not None and rate.rate > threshold:
            out.append(f"{arm.key} ({pct(rate.rate)})")
    return out


def _run_tasks(tasks: list[Task], run: Callable[[Task, TextIO, TextIO], T],
               folder: Callable[[Task], Path], out: TextIO, err: TextIO,
               only_reads: bool) -> list[T]:
    """`run` every task, in several processes (vbw.parallel.ordered) when they only read
    replays and every task's folder but the first is new; when one fails, the new folders
    of the tasks after it are removed, as if they had never run."""
    fresh = [not folder(t).exists() for t in tasks]
    n = parallel.count(only_reads and len(tasks) > 1 and all(fresh[1:]))
    under_way = [0]

    def one(k: int, o: TextIO, e: TextIO) -> T:
        under_way[0] = k  # (in this process: the task that fails, if one does)
        return run(tasks[k], o, e)

    try:
        return parallel.ordered(one, range(len(tasks)), n, out, err)
    except BaseException:
        for k in range(under_way[0] + 1, len(tasks) if n > 1 else 0):
            if fresh[k]:
                shutil.rmtree(folder(tasks[k]), ignore_errors=True)
        raise


def score_tasks(job: Job, obtain: Obtain, whole_run: bool = False,
                only_reads: bool = False) -> int:
    """Score (after `obtain` has found or made its replay) every task; return the exit
    code. `whole_run`: the replay is a merged run, scored over its header's selection (n),
    not the command line's. A shard job is not gated: its slice is not the run; the merged
    run is. `only_reads`: `obtain` only finds replays (generates nothing), so the tasks may
    be scored in several processes (`_run_tasks`), with the same output as in one."""
    cfg = job.cfg

    def folder(task: Task) -> Path:
        return job.out_dir / task.name if len(job.tasks) > 1 else job.out_dir

    def one(task: Task, out: TextIO, err: TextIO) -> tuple[Path, list[str]]:
        """Score and write one task; its folder and its tripped arms."""
        task_dir = folder(task)
        replay_path, mode, written = Obtained(*obtain(task, task_dir, err))
        replay = open_replay(replay_path)
        two = split.wanted(replay_path)  # a large replay, and a free core
        if two:
            _read_ahead(task, replay.header.task_hash is not None)
        try:
            mismatch = check_replay_matches(replay, task, cfg.allow_task_mismatch)
        except ReplayError:
            replay.drain()  # a bad line anywhere in the file is reported first
            raise
        arms = job.arms_of(task)
        page = ItemData(task, replay.header, arms)
        try:
            html = HtmlOutput.name in chosen(cfg.outputs)
            beside = two and html  # vbw.report.pagedata
            report, answers = score(
                task, replay, arms, mode, err,
                n=replay.header.n if whole_run else job.n_of(task), shard=cfg.shard,
                bootstrap=cfg.bootstrap, scored_hook=page.start if beside else page.keep,
                showing=SHOWING if html else Showing(), written=written,
                made_for=None if whole_run else job.selection_of(task).made_for)
            report = report.model_copy(update={"task_mismatch": mismatch})
            md = write_reports(report, task_dir, lambda: page.browser(report), cfg.outputs,
                               err=err, answers=answers)
        finally:
            page.cancel()
        if mismatch is not None:  # once scored: a refusal on the way stays one line
            print(mismatch_line(replay_path, task, mismatch), file=err)
        print(md, file=out)
        if cfg.gate.wrong_valid_above is None or cfg.shard.count != 1:
            return task_dir, []
        return task_dir, [f"{task.name}: {a}" for a in
                          tripped_arms(report, arms, cfg.gate.wrong_valid_above)]

    def one_closed(task: Task, out: TextIO, err: TextIO) -> tuple[Path, list[str]]:
        with closed_after():  # answers.csv's part files, made by this task's passes
            return one(task, out, err)

    done = _run_tasks(job.tasks, one_closed, folder, job.out, job.err, only_reads)
    dirs = [task_dir for task_dir, _ in done]
    tripped = [line for _, lines in done for line in lines]
    out, err = job.out, job.err
    if tripped:
        in_job = f" in {job.name}" if job.name else ""
        print(f"vbw: gate tripped{in_job} (wrong-but-valid above {cfg.gate.wrong_valid_above}): "
              + "; ".join(tripped), file=err)
    print(_written(dirs, job.out_dir, cfg.outputs), file=out)
    return 1 if tripped else 0


def _written(dirs: list[Path], out_dir: Path, outputs: list[str] | None) -> str:
    """The run's closing line: its folder and the report files every task's folder holds
    (only those written: `outputs=[json,md]` names no page)."""
    files = [f for f in report_files(dirs[0], outputs) if all((d / f).is_file() for d in dirs)]
    if len(dirs) == 1:
        return written_line("Reports", dirs[0], files)
    return written_line("Reports", out_dir, files) + " (in each task's folder)"
