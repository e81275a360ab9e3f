"""The `vbw` console script: a thin Hydra app. Hydra composes conf/, pydantic validates,
vbw.app runs. Every VbwError becomes one line on stderr and exit 2."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from vbw.config import RunConfig
from vbw.errors import ConfigError, VbwError
from vbw.resources import bundled
from vbw.validation import validate

CONF = bundled("conf")
GROUPS = ("model", "engine", "arms", "task")
_sweep_exit = 0  # in a multirun, a tripped gate is remembered so every job still runs


def _fail(e: VbwError) -> None:
    print(f"vbw: error: {e}", file=sys.stderr)
    sys.exit(e.exit_code)


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def preflight(args: list[str]) -> None:
    """Check `group=option` overrides before Hydra does: Hydra's own message is several
    lines and exits 1; ours is one line, lists the valid options, and exits 2."""
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, _, value = arg.partition("=")
        key = key.lstrip("+~")
        if key in GROUPS:
            options = _options(key)
            for choice in value.split(","):
                if choice and choice not in options:
                    raise ConfigError(f"{key}={choice}: no such {key} config; valid: "
                                      f"{', '.join(options)} (in {CONF / key})")


@hydra.main(version_base="1.3", config_path=str(CONF), config_name="config")
def _hydra_main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from vbw.app import run

    global _sweep_exit
    try:
        data: Any = OmegaConf.to_container(cfg, resolve=True)
        run_cfg = validate(RunConfig, data, source="config")
        out_dir = Path(HydraConfig.get().runtime.output_dir)
        code = run(run_cfg, out_dir, Path(os.getcwd()))
    except VbwError as e:
        _fail(e)
    except KeyboardInterrupt:
        print("vbw: interrupted", file=sys.stderr)
        sys.exit(130)
    if code and HydraConfig.get().mode == RunMode.MULTIRUN:
        _sweep_exit = max(_sweep_exit, code)
    elif code:
        sys.exit(code)


def main() -> None:
    try:
        preflight(sys.argv[1:])
    except VbwError as e:
        _fail(e)
    _hydra_main()
    if _sweep_exit:
        sys.exit(_sweep_exit)


if __name__ == "__main__":
    main()
