"""A job: what it is made of as the command line composed it (`JobInputs`), resolved
once into the validated config and the tasks, then run by the mode `mode=` names.

`run` is the front door every caller uses (vbw.cli.hydra_job per job, the sweep end per
shard merge): it refuses what no mode could run, before any work, selects each task's
arms once, then hands the job to its mode (vbw.modes, from the MODES registry). What a
refusal depends on is the mode's declared traits, so no mode is named here. `mode=auto`
(the default) re-scores a recorded replay when there is one and generates otherwise.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict

from vbw.config import BackendSettings, RunConfig
from vbw.errors import ConfigError
from vbw.modes import MODES, Job, Mode
from vbw.modes.selection import select
from vbw.registry import Registry
from vbw.task.locate import select_tasks
from vbw.task.runner import Task
from vbw.validation import validate


class JobInputs(BaseModel):
    """What a job's run is made of, as the command line composed it (its fields:
    vbw.cli.hydra_job.job_fields); a sweep job records them in its status.json."""

    model_config = ConfigDict(extra="forbid")
    config: dict[str, Any]          # the run config as composed, before validation
    task_node: Any = None           # the composed `task` node, as written
    task_choice: str | None = None  # the `task=` option chosen
    roots: list[str]                # config roots, in Hydra's search order
    cwd: str
    task_overrides: list[str] = []
    # the command line selects arms (arms=, arms.kinds=, arms.schemas=): a replay's header
    # then does not (vbw.modes.selection); True where no command line says (a record)
    arms_given: bool = True
    first_given: bool = False  # the command line sets task.dataset.first: a header's n yields

    def resolve(self, **changes: Any) -> tuple[RunConfig, list[Task]]:
        """The validated run config (with `changes` applied) and the tasks."""
        cfg = validate(RunConfig, {**self.config, **changes}, source="config")
        tasks = select_tasks(self.task_node, self.task_choice, [Path(r) for r in self.roots],
                             Path(self.cwd), self.task_overrides)
        return cfg, tasks


def _check_shard(cfg: RunConfig, mode: type[Mode], tasks: list[Task]) -> None:
    """A shard is part of a live run of one task; mode=merge joins the parts."""
    if cfg.shard.count > 1 and not mode.generates:
        raise ConfigError(f"shard.count={cfg.shard.count} splits a live run: pass mode=live "
                          f"(mode={cfg.mode} would not generate)")
    if cfg.shard.count > 1 and len(tasks) > 1:
        raise ConfigError(f"shard.count={cfg.shard.count}: a sharded run is of one task, but "
                          f"task selects {len(tasks)}; sweep them, e.g. -m task=gsm8k,bfcl_simple")
    if mode.one_task is not None and len(tasks) > 1:
        raise ConfigError(f"mode={cfg.mode} {mode.one_task}, but task selects "
                          f"{len(tasks)}; choose one, e.g. task=gsm8k")


def _backend_names(backend: BackendSettings) -> list[tuple[str, str, Registry]]:
    """(field, name, registry) for each field the backend kind's `named_by` declares."""
    out = []
    for field, where in backend.named_by.items():
        module, _, attr = where.partition(":")
        out.append((f"backend.{field}", getattr(backend, field),
                    getattr(importlib.import_module(module), attr)))
    return out


def _known_kinds(cfg: RunConfig) -> type[Mode]:
    """The mode, the output writers, the engine and the backend's named kinds (a server's
    dialect) the config names, each looked up in its registry (vbw.config takes any name:
    these registries live above it, and installed packages extend them); a name none has
    is one line that lists those that are, before any model is loaded or item read. vbw's
    own names are found without reading any entry point group."""
    from vbw.generate.engines.base import ENGINES  # its modules import no live extra
    from vbw.report.writers import report_writers

    for field, value, registry in (("mode", cfg.mode, MODES),
                                   ("engine.name", cfg.engine.name, ENGINES),
                                   *_backend_names(cfg.backend)):
        if value not in registry:
            raise ConfigError(f"config: {field}: {registry.unknown(value)}")
    report_writers(cfg.outputs)
    return MODES.get(cfg.mode)


def run(cfg: RunConfig, tasks: list[Task], out_dir: Path, cwd: Path,
        out: TextIO = sys.stdout, err: TextIO = sys.stderr, job: str | None = None,
        arms_given: bool = True, first_given: bool = False) -> int:
    """Check, score (and first generate where needed) every task; return the exit code.
    `job` names the sweep job in the gate message; `arms_given`: the command line selects
    arms, so a scored replay's header does not; `first_given`: it sets the task's `first`,
    so the header's n does not (vbw.modes.selection)."""
    mode = _known_kinds(cfg)
    if cfg.replay is not None and len(tasks) > 1:
        raise ConfigError(f"replay={cfg.replay} names one file but task selects "
                          f"{len(tasks)} tasks; choose one, e.g. task=gsm8k")
    _check_shard(cfg, mode, tasks)
    if cfg.replays is not None and not mode.reads_replays:
        readers = " and ".join(f"mode={m}" for m in sorted(MODES.kinds)
                               if MODES.get(m).reads_replays)
        raise ConfigError(f"replays=[{','.join(cfg.replays)}] is read by {readers} only "
                          f"(mode={cfg.mode}); to score one file pass replay=PATH")
    # arms.schemas names schemas of every task: refused here, before any work
    selected = [select(cfg, task, mode.replay_to_score(cfg, task, cwd), arms_given, err,
                       first_given) for task in tasks]
    return mode.run(Job(cfg, tasks, selected, out_dir, cwd, out, err, job))
