"""mode=compare: read two or more replays of one task, check they are comparable, score
each on the arms they share, pair them on item id and write the comparison.

Comparable means: every file is a replay of the selected task and records that task's
generation hash (the prompts, schemas and data the texts were generated from), unless
`compare.allow_task_change=true`; a replay without a recorded hash is compared and the
report says its version was not verified. Arms are the task's arms (after `arms=`) held
by every replay; an arm some replay lacks is left out and listed, and no shared arm at
all is an error. Every refusal is one line naming the file, the field and the value.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import TextIO

from vbw.config import RunConfig
from vbw.errors import ConfigError, ReplayError
from vbw.modes import MODES, Job, Mode
from vbw.replay.stream import ReplayStream, open_replay
from vbw.report.compare import compare_written, write_compare
from vbw.report.provenance import provenance
from vbw.score.compare import CompareReport, ReplaySide, build_comparison, worse
from vbw.score.results import METRICS
from vbw.score.shared import SharedAudit
from vbw.score.split import arm_keys
from vbw.score.replaycheck import check_replay_matches
from vbw.score.stream import Scored, score_stream
from vbw.task.arms import Arm, parse_arm, select_arms
from vbw.task.audit import warn_findings
from vbw.task.runner import Task


def parse_gate(spec: str) -> tuple[Arm, str]:
    """`ARM:METRIC`, e.g. `constrained[arguments]:answer_accuracy`."""
    arm_key, _, metric = spec.rpartition(":")
    try:
        arm = parse_arm(arm_key)
    except ValueError:
        arm = None
    if arm is None or metric not in METRICS:
        raise ConfigError(f"compare.fail_if_worse: {spec!r} is not ARM:METRIC, e.g. "
                          f"\"constrained[arguments]:answer_accuracy\" (metrics: "
                          f"{', '.join(METRICS)})")
    if metric != "answer_accuracy" and not arm.has_contract:
        raise ConfigError(f"compare.fail_if_worse: {spec!r}: {arm.key} has no {metric} "
                          "(it promises no schema)")
    return arm, metric


def _label(r: ReplayStream) -> str:
    h = r.header
    model = (h.model.name or h.model.file) if h.model else None
    model = model or (h.backend.model if h.backend else None)
    return f"{model}/{h.engine}" if model and h.engine else Path(r.path).stem


def _labels(replays: list[ReplayStream]) -> list[str]:
    labels = [_label(r) for r in replays]  # a label twice: add its index in replays
    return [f"{lab} [{i}]" if labels.count(lab) > 1 else lab for i, lab in enumerate(labels)]


def _task_check(task: Task, replays: list[ReplayStream], shown: list[str],
                allow: bool) -> str:
    """Refuse a replay of another task, or (unless allowed) of another task version;
    return the sentence report.md states about the versions."""
    want = task.generation_hash()
    unrecorded, differs = [], []
    for r, name in zip(replays, shown):
        check_replay_matches(r, task, allow_mismatch=True)  # the task's name
        h = r.header.task_hash
        if h is None:
            unrecorded.append(name)
        elif h != want:
            if not allow:
                raise ReplayError(
                    f"{r.path}: meta.task_hash is {h}, but task {task.name} ({task.path}) "
                    f"hashes to {want}: the texts were generated from another version of "
                    "its prompts, schemas or data; pass compare.allow_task_change=true to "
                    "compare anyway")
            differs.append(name)
    out = f"the task's generation hash is {want[:12]}"
    if differs:
        out += (f"; it differs in {', '.join(differs)}, compared anyway "
                "(compare.allow_task_change=true)")
    if unrecorded:
        out += f"; not recorded in {', '.join(unrecorded)}, so not verified there"
    if not differs and not unrecorded:
        out += ", recorded by every replay"
    return out + "."


def _held_arms(r: ReplayStream) -> set[str]:
    """The arms a replay holds: its header's list, or (a validbutwrong 0.1 header lists
    none) every arm key of its lines (vbw.score.split.arm_keys)."""
    return set(r.header.arms) if r.header.arms is not None else arm_keys(Path(r.path))


def _arms(task: Task, kinds: list[str], schemas: list[str] | None,
          replays: list[ReplayStream],
          labels: list[str]) -> tuple[list[Arm], dict[str, list[str]]]:
    """The task's arms every replay holds, and those only some hold (arm -> labels)."""
    held = [_held_arms(r) for r in replays]
    wanted = select_arms(task.name, task.schema_names, task.spec.answer_schema, kinds, schemas)
    common = [a for a in wanted if all(a.key in h for h in held)]
    partial = {a.key: [lab for lab, h in zip(labels, held) if a.key in h]
               for a in wanted if a not in common and any(a.key in h for h in held)}
    if not common:
        have = "; ".join(f"{lab}: {', '.join(sorted(h)) or 'none'}"
                         for lab, h in zip(labels, held))
        raise ReplayError(f"replays: no arm of task {task.name} is in every replay "
                          f"({have})")
    return common, partial


def _open(path: Path, i: int, name: str) -> ReplayStream:
    try:
        return open_replay(path)
    except ReplayError as e:
        raise ReplayError(f"replays[{i}]={name}: {e}") from None


def _headers(paths: list[Path], shown: list[str]) -> list[ReplayStream]:
    """Every replay's checked header, its file closed again: 1,000 replays are never
    open at once."""
    out = []
    for i, (p, name) in enumerate(zip(paths, shown)):
        stream = _open(p, i, name)
        stream.close()
        out.append(stream)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _score_one(task: Task, path: Path, i: int, name: str, label: str, arms: list[Arm],
               n: int | None, warnings: TextIO,
               shared: SharedAudit) -> tuple[ReplaySide, Scored]:
    """One replay through the streaming scorer (vbw.score.stream), as normal scoring
    reads it: states, and 16-byte digests of its texts for identity; the texts are
    dropped as they pass. Its items join the task checks in `shared`."""
    stream = _open(path, i, name)
    scored = score_stream(task, stream, arms, n, warnings, shared=shared, digests=True)
    if stream.torn_tail:
        print(f"vbw: warning: {name} ends in a partly written line (ignored)", file=warnings)
    side = ReplaySide(label=label, path=name, task_hash=stream.header.task_hash,
                      sha256=_sha256(path),
                      provenance=provenance(stream.header, scored.timings, scored.end),
                      excluded=scored.states.excluded_reasons, missing=scored.missing,
                      samples=stream.header.samples)
    return side, scored


def compare_replays(task: Task, paths: list[Path], shown: list[str], *, kinds: list[str],
                    n: int | None, allow_task_change: bool, seed: int, resamples: int,
                    err: TextIO, schemas: list[str] | None = None) -> CompareReport:
    """Read, check, score and compare; `shown` names each path as the user gave it, and
    `schemas` (arms.schemas) keeps the arms of those schema labels only.
    Warnings reach `err` only once the comparison stands: a refusal stays one line.
    Each replay is streamed through the scorer in turn, so memory holds per replay its
    states and text digests, never its texts (1,000 replays compare in bounded memory),
    and the task checks see each item once, as it passes."""
    warnings = io.StringIO()
    replays = _headers(paths, shown)
    labels = _labels(replays)
    task_check = _task_check(task, replays, shown, allow_task_change)
    arms, partial = _arms(task, kinds, schemas, replays, labels)
    shared = SharedAudit(task, n)
    each = [_score_one(task, path, i, name, label, arms, n, warnings, shared)
            for i, (path, name, label) in enumerate(zip(paths, shown, labels))]
    warn_findings(shared.result(), warnings)  # once, on every replay's items
    report = build_comparison([side for side, _ in each], [s for _, s in each], arms,
                              task=task.name, label=task.spec.label,
                              selected=task.ids(n), task_hash=task.generation_hash(),
                              task_check=task_check, arms_left_out=partial, seed=seed,
                              resamples=resamples)
    if report.n == 0:
        first = report.left_out.ids[0]
        why = "; ".join(f"{k}: {v}" for k, v in report.left_out.reasons[first].items())
        raise ReplayError(f"replays: no item of task {task.name} is scored in every "
                          f"replay ({report.left_out.n} left out, e.g. {first} ({why}))")
    err.write(warnings.getvalue())
    return report


def _listed(paths: list[str] | None) -> str:
    return "null" if paths is None else f"[{','.join(paths)}]"


def _inputs(cfg: RunConfig, tasks: list[Task], cwd: Path) -> tuple[Task, list[Path]]:
    listed = _listed(cfg.replays)
    if cfg.replay is not None:
        raise ConfigError(f"replay={cfg.replay}: mode=compare reads replays=[A,B,...]")
    if len(tasks) != 1:
        raise ConfigError(f"task: mode=compare compares replays of one task, but {len(tasks)} "
                          f"are selected ({', '.join(t.name for t in tasks)}); name one, "
                          "e.g. task=bfcl_simple")
    if not cfg.replays or len(cfg.replays) < 2:
        raise ConfigError(f"replays={listed}: mode=compare needs two or more replay "
                          "files, e.g. 'replays=[a.jsonl,b.jsonl]' (the first is the "
                          "reference)")
    paths = [Path(p).expanduser() for p in cfg.replays]
    return tasks[0], [p if p.is_absolute() else cwd / p for p in paths]


def run_compare(cfg: RunConfig, tasks: list[Task], out_dir: Path, cwd: Path,
                out: TextIO, err: TextIO) -> int:
    """mode=compare from the CLI: the report, then the fail_if_worse gates (exit 1)."""
    task, paths = _inputs(cfg, tasks, cwd)
    gates = [parse_gate(g) for g in cfg.compare.fail_if_worse]
    report = compare_replays(task, paths, list(cfg.replays or []), kinds=cfg.arms.kinds,
                             schemas=cfg.arms.schemas, n=cfg.n,
                             allow_task_change=cfg.compare.allow_task_change,
                             seed=cfg.bootstrap.seed, resamples=cfg.bootstrap.resamples,
                             err=err)
    for arm, metric in gates:
        if arm.key not in report.arms:
            raise ConfigError(f"compare.fail_if_worse: {arm.key}:{metric}: {arm.key} is not "
                              f"compared (compared: {', '.join(report.arms)})")
    print(write_compare(report, out_dir, cfg.outputs), file=out)
    tripped = worse(report, [(a.key, m) for a, m in gates])
    if tripped:
        print("vbw: gate tripped (compare.fail_if_worse, detectably worse): "
              + "; ".join(tripped), file=err)
    print(compare_written(out_dir, cfg.outputs), file=out)
    return 1 if tripped else 0


@MODES.register
class Compare(Mode):
    name = "compare"
    reads_replays = True

    @staticmethod
    def run(job: Job) -> int:
        return run_compare(job.cfg, job.tasks, job.out_dir, job.cwd, job.out, job.err)
