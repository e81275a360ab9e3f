"""The `vbw` console script: a thin Hydra app. The command line is first composed with
Hydra's own loader (vbw.compose) so a bad override is one line, exit 2; a plain run is
then run on that composition by Hydra's job runner (vbw.launch), anything else (sweeps,
--cfg, --help) by `@hydra.main`; pydantic validates, vbw.app runs. Every VbwError
becomes one line on stderr and exit 2."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from vbw.compose import CONF, CONFIG_NAME, check_command_line, config_roots
from vbw.config import RunConfig
from vbw.errors import VbwError
from vbw.launch import job_name, run_composed
from vbw.rundir import claimed
from vbw.task.locate import is_task_path, select_tasks
from vbw.validation import validate

_sweep_exit = 0  # in a multirun, a tripped gate is remembered so every job still runs


INTERNAL_ERROR = 3


def _fail(e: VbwError) -> None:
    print(f"vbw: error: {e}", file=sys.stderr)
    sys.exit(e.exit_code)


def _internal_error() -> None:
    """An exception vbw did not anticipate is a bug: keep the traceback, ask for a report,
    and exit 3, so CI never reads it as a tripped gate (1) or a usage error (2)."""
    traceback.print_exc()
    print("vbw: internal error (a bug in vbw, not in your input): please report it with the "
          "command line and the traceback above", file=sys.stderr)
    sys.exit(INTERNAL_ERROR)


def task_path_form(argv: list[str]) -> list[str]:
    """`task=./my_task.yaml` (or a comma list of paths, for -m) is shorthand for the
    canonical `task.files=[./my_task.yaml]`; a note on stdout says so (stderr is kept for
    errors, one line each)."""
    out = []
    for arg in argv:
        key, eq, value = arg.partition("=")
        parts = value.split(",")
        if eq and key == "task" and value and "(" not in value \
                and all(p and is_task_path(p) for p in parts):
            new = "task.files=" + ",".join(f"[{p}]" for p in parts)
            print(f"vbw: note: {arg} is read as {new} (task.files is the canonical form)")
            arg = new
        out.append(arg)
    return out


def _task_overrides(overrides: Any) -> list[str]:
    return [o for o in overrides if o.lstrip("+~").startswith("task.")]


@hydra.main(version_base="1.3", config_path=str(CONF), config_name=CONFIG_NAME)
def _hydra_main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from vbw.app import run

    global _sweep_exit
    hc = HydraConfig.get()
    try:
        rest = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "task"])
        data: Any = OmegaConf.to_container(rest, resolve=True)
        run_cfg = validate(RunConfig, data, source="config")
        # a task is pure YAML: read as written, never interpolated
        node = OmegaConf.to_container(cfg.task, resolve=False) if "task" in cfg else None
        cwd = Path(os.getcwd())
        tasks = select_tasks(node, hc.runtime.choices.get("task"),
                             config_roots(hc.runtime.config_sources), cwd,
                             _task_overrides(hc.overrides.task))
        out_dir = Path(hc.runtime.output_dir)
        with claimed(out_dir):
            code = run(run_cfg, tasks, out_dir, cwd)
    except VbwError as e:
        _fail(e)
    except KeyboardInterrupt:
        print("vbw: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # `vbw | head`: the reader left; the report files are written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    except Exception:  # noqa: BLE001  a bug: never mistaken for a gate (1) or usage (2)
        _internal_error()
    if code and hc.mode == RunMode.MULTIRUN:
        _sweep_exit = max(_sweep_exit, code)
    elif code:
        sys.exit(code)


def main() -> None:
    if not OmegaConf.has_resolver("vbw_pid"):
        # run folders carry the process id: two runs started in the same second differ
        OmegaConf.register_new_resolver("vbw_pid", lambda: str(os.getpid()))
    try:
        argv = task_path_form(sys.argv[1:])
        composed = check_command_line(argv, job_name(_hydra_main))
    except VbwError as e:
        _fail(e)
    except Exception:  # noqa: BLE001
        _internal_error()
    sys.argv[1:] = argv
    if composed is not None:  # a plain run, already composed: not composed again
        run_composed(composed, _hydra_main)
    else:
        _hydra_main()
    if _sweep_exit:
        sys.exit(_sweep_exit)


if __name__ == "__main__":
    main()
