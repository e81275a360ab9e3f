"""Hydra's own records of a run, without credentials.

How it works and why: docs/design.md, section vbw.cli.hydra_redact.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from vbw.redact import redact_text

HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
MULTIRUN = "multirun.yaml"
_BARE_MASK = re.compile(r"(:[ \t]+)\*\*\*(?=[ \t]*$)", re.M)
SWEEP_DEPTH = 4  # job folders sit this many levels below the sweep folder at most


def redact_file(path: Path) -> bool:
    """Rewrite `path` with its credentials masked; whether it changed (absent: False)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return False
    clean = redact_text(text)
    if clean == text:
        return False
    if not _parses(clean):  # `key: ***` reads as a YAML alias: quote the mask
        clean = _BARE_MASK.sub(r"\1'***'", clean)
    from vbw.report.files import write_atomic  # rarely needed: kept off start-up

    write_atomic(path, clean)
    return True


def _parses(text: str) -> bool:
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return True


def redact_job_files(output_dir: Path, subdir: str | None, multirun: bool) -> None:
    """The job's `.hydra/*.yaml` and, in a sweep, its multirun.yaml above the job folder."""
    if subdir is not None:
        for name in HYDRA_FILES:
            redact_file(output_dir / subdir / name)
    for parent in list(output_dir.parents)[:SWEEP_DEPTH] if multirun else []:
        if redact_file(parent / MULTIRUN) or (parent / MULTIRUN).is_file():
            break


def _select(config: DictConfig, key: str) -> Any:
    try:
        return OmegaConf.select(config, key)
    except Exception:  # noqa: BLE001  an interpolation only Hydra's run can resolve
        return None


class RedactHydraFiles(Callback):
    """Hydra callback: see the module docstring."""

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        out = _select(config, "hydra.runtime.output_dir")
        if out:
            redact_job_files(Path(str(out)), _select(config, "hydra.output_subdir"),
                             _select(config, "hydra.mode") == RunMode.MULTIRUN)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        where = _select(config, "hydra.sweep.dir")
        if where:
            redact_file(Path(str(where)) / MULTIRUN)
