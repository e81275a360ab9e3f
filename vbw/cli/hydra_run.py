"""One run of an already composed config through Hydra's own job runner.

How it works and why: docs/design.md, section vbw.cli.hydra_run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from vbw.cli import hydra_internals
from vbw.cli.compose import Composed
from vbw.cli.run_folder import claimed
from vbw.errors import ConfigError, one_line


def job_name(task_function: Callable[[Any], Any]) -> str:
    """The job name `@hydra.main` gives `task_function` (its module's last part): a
    composition records it as hydra.job.name, so it is set before vbw.cli.compose composes."""
    return hydra_internals.task_name(task_function)


def run_composed(composed: Composed, task_function: Callable[[Any], Any]) -> None:
    """Run `task_function` on the composed config as `Hydra.run` would, without composing."""
    from hydra.core.global_hydra import GlobalHydra

    hydra = hydra_internals.new_hydra(job_name(task_function), composed.loader)
    GlobalHydra.instance().initialize(hydra)
    try:
        with claimed(_run_dir(composed.cfg)):  # before Hydra writes anything there
            hydra_internals.run_and_report(lambda: _run(composed, hydra, task_function))
    finally:
        GlobalHydra.instance().clear()


def _run_dir(cfg: Any) -> Path:
    """The folder Hydra's job runner will run in (hydra.run.dir, resolved as it resolves
    it: with the config set in HydraConfig, and the same config object, so a `${now:}` in
    it is the value the runner reads from the resolver's cache)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    HydraConfig.instance().set_config(cfg)  # (which marks the hydra node read-only)
    try:
        return Path(str(OmegaConf.select(cfg, "hydra.run.dir")))
    except Exception as e:  # noqa: BLE001  OmegaConf's and its resolvers' errors alike
        msg = one_line(e, typed=False).split(" full_key:")[0]
        raise ConfigError(f"hydra.run.dir: cannot resolve it ({msg})") from None
    finally:
        OmegaConf.set_readonly(cfg.hydra, None)  # as composed: `_run` still records the mode


def _run(composed: Composed, hydra: Any, task_function: Callable[[Any], Any]) -> None:
    from hydra.core.utils import configure_log, run_job
    from hydra.types import HydraContext, RunMode
    from omegaconf import open_dict, read_write

    cfg = composed.cfg
    # what Hydra's `_run_app` adds when the config leaves hydra.mode unset, as composing
    # with the override would have recorded it
    with read_write(cfg), open_dict(cfg):
        cfg.hydra.mode = RunMode.RUN
        cfg.hydra.overrides.hydra.append("hydra.mode=RUN")
    configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    callbacks = hydra_internals.callbacks(cfg)
    callbacks.on_run_start(config=cfg, config_name=composed.config_name)
    ret = run_job(hydra_context=HydraContext(config_loader=hydra.config_loader,
                                             callbacks=callbacks),
                  task_function=task_function, config=cfg, job_dir_key="hydra.run.dir",
                  job_subdir_key=None, configure_logging=True)
    callbacks.on_run_end(config=cfg, config_name=composed.config_name, job_return=ret)
    _ = ret.return_value  # re-raises the job's exception, as Hydra.run does
