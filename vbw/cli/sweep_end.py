"""The end of a multirun, in the process that launched it: merge shards, summarise, and
compute the exit code from the jobs' status files.

Hydra calls `on_multirun_end` in the launching process after every job has returned,
whichever launcher ran them (configured in conf/config.yaml under `hydra.callbacks`).
The exit code is read from the files written there (summary.json), so it never depends on
a job's process being this one; vbw.cli.command reads it back from summary.json too
(vbw.sweep.outcome says how it learns the folder).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from vbw.cli.hydra_redact import MULTIRUN, redact_file
from vbw.cli.run_folder import claimed
from vbw.errors import VbwError
from vbw.redact import redact_text
from vbw.report.escape import one_line
from vbw.sweep.outcome import tell_launcher

if TYPE_CHECKING:
    from vbw.sweep.status import JobStatus

# Hydra makes this callback for every run, sweep or not: what only a sweep's end needs
# (status files, summaries, the writers) is imported there, off a plain run's start-up.


class SweepEnd(Callback):
    """Hydra callback: see the module docstring."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from vbw.sweep.status import write_launch

        write_launch(Path(str(config.hydra.sweep.dir)))  # before any job starts

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        redact_file(sweep_dir / MULTIRUN)  # also when hydra.callbacks.vbw_redact is dropped
        finish_sweep(sweep_dir, outputs=config.get("outputs"))
        tell_launcher(sweep_dir)  # vbw.cli.command reads the exit code from its summary.json


def _group_key(status: JobStatus) -> tuple[str, ...]:
    return tuple(o for o in status.overrides if not o.lstrip("+~").startswith("shard.index="))


def _shard_groups(jobs: list[tuple[Path, JobStatus]]) -> list[list[tuple[Path, JobStatus]]]:
    """Shard jobs of one run: the same overrides but for shard.index, in sweep order."""
    groups: dict[tuple[str, ...], list[tuple[Path, JobStatus]]] = {}
    for d, s in jobs:
        if s.shard is not None:
            groups.setdefault(_group_key(s), []).append((d, s))
    return list(groups.values())


def _merge(group: list[tuple[Path, JobStatus]], out_dir: Path, out: TextIO,
           err: TextIO) -> JobStatus:
    """Merge one run's shards into out_dir and score it, as mode=merge would."""
    from vbw.cli.job import JobInputs, run
    from vbw.sweep.status import JobStatus, reports_in, write_status

    first = group[0][1]
    overrides = list(_group_key(first))
    status = JobStatus(job=out_dir.name, overrides=overrides, model=first.model,
                       engine=first.engine, exit_code=3, reason="internal error")
    failed = [s for _, s in group if s.exit_code != 0]
    if failed or first.inputs is None:
        bad = failed[0] if failed else first
        status.exit_code, status.reason = max(bad.exit_code, 2), \
            f"not merged: {bad.job} (shard {(bad.shard or {}).get('index')}) failed: {bad.reason}"
        print(f"vbw: error: {out_dir.name}: {status.reason}", file=err)
        return status
    print(f"== {out_dir.name}: {len(group)} shard(s) of {' '.join(overrides)} ==", file=out,
          flush=True)
    try:
        inputs = JobInputs.model_validate(first.inputs)
        cfg, tasks = inputs.resolve(mode="merge", replays=[str(d) for d, _ in group],
                                    shard={"index": 0, "count": 1}, replay=None, resume=False)
        with claimed(out_dir):
            status.exit_code = run(cfg, tasks, out_dir, Path(inputs.cwd), out, err,
                                   job=f"{out_dir.name} ({' '.join(overrides)})")
        status.reason = "ok" if status.exit_code == 0 else "gate tripped"
    except VbwError as e:
        status.exit_code, status.reason = e.exit_code, redact_text(str(e))
        print(f"vbw: error: {out_dir.name}: {status.reason}", file=err)
    except Exception as e:  # noqa: BLE001  a bug: recorded like a job's
        traceback.print_exc(file=err)
        status.reason = f"internal error: {type(e).__name__}: {e}"
    status.reports = reports_in(out_dir)
    write_status(out_dir, status)
    return status


def print_outputs(jobs: list[tuple[Path, JobStatus]], out: TextIO) -> None:
    """The output of each job that ran outside this process (its status holds it), under
    its header, in job order: one write per job."""
    for _, s in jobs:
        if s.output is None:
            continue
        label = (f"{s.job}: {' '.join(s.overrides)}" if s.overrides else s.job)
        body = s.output if s.output.strip() else f"(no output: {s.reason})\n"
        out.write(f"== {one_line(label)} ==\n{body}\n")
        out.flush()


def finish_sweep(sweep_dir: Path, out: TextIO | None = None, err: TextIO | None = None,
                 outputs: Any = None) -> int:
    """Print the output of jobs that ran elsewhere, merge shard groups, write and print the
    summary (`outputs`: the sweep's `outputs` setting; a name a job refused is ignored
    here); return the sweep's exit code."""
    from vbw.report.writers import OUTPUT_NAMES
    from vbw.modes.merge.write import MERGED_PREFIX
    from vbw.sweep.status import belongs, job_dirs, read_launch, read_status, sweep_exit
    from vbw.sweep.summary import job_rows, summary_written, write_summary

    out, err = out or sys.stdout, err or sys.stderr
    launch = read_launch(sweep_dir)
    jobs, stale = [], []
    for d in job_dirs(sweep_dir, MERGED_PREFIX):
        status = read_status(d)
        (jobs if belongs(d, status, launch) else stale).append((d, status))
    if stale:
        names = [str(d.relative_to(sweep_dir)) for d, _ in stale]
        shown = ", ".join(names[:5]) + (f" (+{len(names) - 5} more)" if len(names) > 5 else "")
        print(f"vbw: warning: {sweep_dir}: ignored {len(stale)} job folder(s) not from this "
              f"launch (a reused hydra.sweep.dir): {shown}", file=err, flush=True)
    print_outputs(jobs, out)
    groups = _shard_groups(jobs)
    for k, group in enumerate(groups):
        name = MERGED_PREFIX if len(groups) == 1 else f"{MERGED_PREFIX}_{k}"
        jobs.append((sweep_dir / name, _merge(group, sweep_dir / name, out, err)))
    code = sweep_exit([s.exit_code for _, s in jobs])
    rows = [row for d, s in jobs for row in job_rows(d, sweep_dir, s)]
    chosen = None if outputs is None else [o for o in outputs if o in OUTPUT_NAMES]
    md = write_summary(sweep_dir, rows, code, chosen)
    print(md, file=out)
    print(summary_written(sweep_dir, chosen), file=out, flush=True)
    return code
