"""The `vbw` command: a thin Hydra app. The command line is first composed with Hydra's
own loader (vbw.cli.compose) so a bad override is one line, exit 2; a plain run is then
run on that composition by Hydra's job runner (vbw.cli.hydra_run), anything else (sweeps,
--cfg, --help) by `@hydra.main`; the task function runs the job (vbw.cli.hydra_job).
Every VbwError becomes one line on stderr and exit 2. In a multirun each job records its
outcome in its own status.json instead of exiting (vbw.sweep), and the sweep's exit code is
read back from the summary.json the multirun's end writes (vbw.sweep.outcome)."""

from __future__ import annotations

import contextlib
import errno
import gc
import io
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from vbw.cli import warm_worker
from vbw.cli.compose import CONF, CONFIG_NAME, check_command_line, parse_args
from vbw.cli.hydra_job import INTERNAL_ERROR, job_fields, plain_job, sweep_job
from vbw.cli.hydra_redact import redact_job_files
from vbw.cli.hydra_run import job_name, run_composed
from vbw.cli.run_folder import claimed
from vbw.errors import VbwError
from vbw.redact import redact_text
from vbw.sweep.outcome import read_exit_code, sweep_dir_told
from vbw.task.locate import is_task_path

_LAUNCHER_PID: int | None = None  # set by main(): the process a sweep's jobs report to


def _fail(e: VbwError) -> None:
    print(f"vbw: error: {redact_text(str(e))}", file=sys.stderr)
    sys.exit(e.exit_code)


# a device with no room for what vbw writes (`vbw > /dev/full`, a full disk or quota):
# the environment's doing, so one line and exit 2, not a bug's traceback and exit 3
FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _stdout_gone() -> None:
    """Point stdout at /dev/null: nothing more can reach it (a reader that left, a device
    with no room), and the interpreter's last flush must not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _no_room(e: OSError) -> None:
    where = f" ({e.filename})" if e.filename else ""
    _stdout_gone()
    print(f"vbw: error: cannot write{where}: {e.strerror or e}", file=sys.stderr)
    sys.exit(2)


def _internal_error() -> None:
    """An exception vbw did not anticipate is a bug: keep the traceback, ask for a report,
    and exit 3, so CI never reads it as a tripped gate (1) or a usage error (2)."""
    traceback.print_exc()
    print("vbw: internal error (a bug in vbw, not in your input): please report it with the "
          "command line and the traceback above", file=sys.stderr)
    sys.exit(INTERNAL_ERROR)


def task_path_form(argv: list[str]) -> list[str]:
    """`task=./my_task.yaml` (or a comma list of paths, for -m) is shorthand for the
    canonical `task.files=[./my_task.yaml]`; a note on stderr says so (stdout keeps only
    the reports)."""
    out = []
    for arg in argv:
        key, eq, value = arg.partition("=")
        parts = value.split(",")
        if eq and key == "task" and value and "(" not in value \
                and all(p and is_task_path(p) for p in parts):
            new = "task.files=" + ",".join(f"[{p}]" for p in parts)
            print(f"vbw: note: {arg} is read as {new} (task.files is the canonical form)",
                  file=sys.stderr)
            arg = new
        out.append(arg)
    return out


@hydra.main(version_base="1.3", config_path=str(CONF), config_name=CONFIG_NAME)
def _hydra_main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hc = HydraConfig.get()
    redact_job_files(Path(hc.runtime.output_dir), hc.output_subdir,  # if the callback is off
                     hc.mode == RunMode.MULTIRUN)
    try:
        if hc.mode == RunMode.MULTIRUN:
            sweep_job(cfg, hc, _LAUNCHER_PID)
            return
        out_dir = Path(hc.runtime.output_dir)
        with claimed(out_dir):  # vbw.cli.hydra_run's claim already, for a plain run it composed
            code = plain_job(job_fields(cfg, hc), out_dir)
    except VbwError as e:
        _fail(e)
    except KeyboardInterrupt:
        print("vbw: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # `vbw | head`: the reader left; the report files are written
        _stdout_gone()
        sys.exit(141)
    except OSError as e:
        if e.errno not in FULL:
            _internal_error()
        _no_room(e)
    except Exception:  # noqa: BLE001  a bug: never mistaken for a gate (1) or usage (2)
        _internal_error()
    if code:
        sys.exit(code)


def _print_redacted(run: Any) -> None:
    """`run()` with what it prints to stdout redacted (vbw.redact) before it is shown."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            run()
    finally:
        sys.stdout.write(redact_text(buf.getvalue()))
        sys.stdout.flush()


def _register_resolvers() -> None:
    """Run folders carry the launching process's id, so two runs started in the same
    second differ. Cached, and registered on import: a launcher's worker process (joblib,
    submitit, Ray) imports this module to run a job and resolves the sweep folder from the
    launching process's cached value, so every job lands in one sweep folder."""
    if not OmegaConf.has_resolver("vbw_pid"):
        OmegaConf.register_new_resolver("vbw_pid", lambda: str(os.getpid()), use_cache=True)


_register_resolvers()


def main() -> None:
    global _LAUNCHER_PID
    _LAUNCHER_PID = os.getpid()
    try:
        argv = task_path_form(sys.argv[1:])
        composed = check_command_line(argv, job_name(_hydra_main))
    except VbwError as e:
        _fail(e)
    except Exception:  # noqa: BLE001
        _internal_error()
    finally:
        gc.enable()  # vbw.cli.console turns it off while the command line is composed
    sys.argv[1:] = argv
    if composed is not None:  # a plain run, already composed: not composed again
        try:
            run_composed(composed, _hydra_main)
        except VbwError as e:  # its folder is another run's (vbw.cli.run_folder)
            _fail(e)
        return
    warm_worker.stop()  # a sweep, --cfg, --help: no plain job to hand over
    with sweep_dir_told() as told:  # a multirun's end says where its summary.json is
        try:
            if parse_args(argv).cfg is not None:  # Hydra prints the config: no credentials
                _print_redacted(_hydra_main)
            else:
                _hydra_main()
        except OSError as e:  # Hydra's own output (--help, --cfg) with no room for it
            if e.errno not in FULL:
                raise
            _no_room(e)
        sweep_dir = told()
    code = read_exit_code(sweep_dir) if sweep_dir is not None else None
    if code is None and parse_args(argv).multirun:
        print("vbw: internal error: the sweep ended without its summary (is "
              "hydra.callbacks.vbw_sweep removed?); its exit code is unknown", file=sys.stderr)
        code = INTERNAL_ERROR
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
