"""The command line, checked with Hydra's own parser and config loader before Hydra runs.

Hydra reports a bad override in several lines and exits 1, which a CI job would read as a
tripped gate. So vbw first composes exactly what Hydra will (the same search path: the
bundled conf/, `--config-dir`, `hydra.searchpath`) and turns any failure into one line
naming the override, exit 2. A multirun is expanded with Hydra's own sweep logic and every
job is composed, so `task=glob(*)` and `-m task=gsm8k,my_qa` are checked against the
bundled and the user's options alike.

How it works and why: docs/design.md, section vbw.cli.compose.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

from vbw.cli import bounds, hints, hydra_internals
from vbw.errors import ConfigError, one_line
from vbw.resources import bundled

CONF = bundled("conf")
CONFIG_NAME = "config"
GROUPS = ("model", "backend", "engine", "arms", "task")


def version_line() -> str:
    """What `vbw --version` prints: vbw's version, then the Hydra it runs on."""
    import hydra

    from vbw import __version__

    return f"vbw {__version__} (hydra-core {hydra.__version__})"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Hydra's own argument parser (the one `@hydra.main` uses); a usage error is one
    line, not argparse's usage block, and `--version` names vbw's version (Hydra's alone
    says nothing about the vbw that runs)."""
    parser = hydra_internals.args_parser()

    def error(message: str) -> NoReturn:
        raise ConfigError(f"command line: {message} (see vbw --help)")

    parser.error = error  # type: ignore[method-assign]
    for action in parser._actions:  # argparse keeps no public list of them
        if isinstance(action, argparse._VersionAction):
            action.version = version_line()
    return parser.parse_args(argv)


def search_path(config_dir: str | None, config_path: str | None = None) -> Any:
    """The search path `@hydra.main` builds: Hydra's, the bundled conf/ (or
    `--config-path`, resolved as Hydra does from the module declaring `@hydra.main`),
    `--config-dir`."""
    from hydra.core.config_search_path import SearchPathQuery

    if config_path is None:
        sp = hydra_internals.config_search_path(str(CONF))
    else:
        sp = hydra_internals.automatic_config_search_path("vbw.cli.command", config_path)
    if config_dir is not None:
        where = os.path.abspath(config_dir)
        if not os.path.isdir(where):
            raise ConfigError(f"--config-dir {config_dir}: not a directory")
        sp.prepend(provider="command-line", path=f"file://{where}",
                   anchor=SearchPathQuery(provider="schema"))
    return sp


def config_roots(sources: Any) -> list[Path]:
    """Folders of the file-based config sources, in Hydra's search order (Hydra's own
    package and structured configs left out): where group options live."""
    roots = []
    for s in sources:
        if s.provider in ("hydra", "schema") or s.schema != "file":
            continue
        roots.append(Path(s.path))
    return roots


@dataclass
class Composed:
    """A plain run's config, composed once: what Hydra's job runner needs to run it."""

    loader: Any        # hydra's ConfigLoaderImpl, on the search path `@hydra.main` builds
    config_name: str
    cfg: Any           # the composed DictConfig, hydra node included


def check_command_line(argv: list[str], job_name: str) -> Composed | None:
    """Compose every job the command line asks for; raise ConfigError on the first failure.
    A plain run (no -m, --cfg, --help, ... and nothing that sets hydra.mode or hydra.verbose)
    returns its composed config, so it is not composed again; anything else returns None
    and goes through `@hydra.main`. `job_name` is what `@hydra.main` names the
    job (composition records it)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.utils import JobRuntime
    from hydra.errors import HydraException

    JobRuntime().set("name", job_name)

    args = parse_args(argv)
    _hydra_plugins()
    if args.help or args.hydra_help or args.shell_completion or args.info:
        return None  # nothing is composed
    loader = hydra_internals.config_loader(search_path(args.config_dir, args.config_path))
    name = args.config_name or CONFIG_NAME
    bounds.check_overrides(args.overrides)
    try:
        parsed = OverridesParser.create(config_loader=loader).parse_overrides(args.overrides)
    except HydraException as e:
        raise ConfigError(_parse_error(e)) from None
    cfg = None
    # every file Hydra reads to compose, read by vbw's loader first
    with hydra_internals.guarded_yaml(CONF):
        for job in _jobs(parsed, args.overrides, bool(args.multirun)):
            cfg = _compose(loader, name, job)
            bounds.check_interpolations(cfg)
            if args.cfg is None:
                _check_required(cfg, job)
    if cfg is not None and args.cfg is None:
        _check_writable(cfg, bool(args.multirun))
    if cfg is None or args.config_path is not None or not _plain_run(args, parsed, cfg):
        return None  # Hydra's own path (with --config-path: Hydra's search path, as here)
    return Composed(loader=loader, config_name=name, cfg=cfg)


def _hydra_plugins() -> None:
    """Hydra imports every module of the installed `hydra_plugins` package the first time
    it composes: one that raises (anything but an ImportError, SystemExit included) stops
    every run, and Hydra's warning for one that fails to import is several lines. So the
    scan runs here first: a module that raises is one line naming it (exit 2); one that
    does not import is Hydra's to skip, with one warning line naming it."""
    import warnings

    from hydra.core.plugins import Plugins

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            Plugins.instance()
        except (Exception, SystemExit) as e:
            raise ConfigError(f"hydra_plugins: {_plugin_module(e)} does not import "
                              f"({one_line(e)}); fix or uninstall that Hydra "
                              "plugin") from None
    for w in caught:
        print(f"vbw: warning: {' '.join(str(w.message).split())}", file=sys.stderr)


def _plugin_module(e: BaseException) -> str:
    """The module of package `hydra_plugins` that raised `e` (deepest in its traceback)."""
    name = "a module"
    tb = e.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if isinstance(module, str) and module.startswith("hydra_plugins."):
            name = module
        tb = tb.tb_next
    return name


def _plain_run(args: argparse.Namespace, parsed: list[Any], cfg: Any) -> bool:
    """Hydra would run exactly this config as one job: no other command, no mode or debug
    logging asked for (those read or change the config in ways only Hydra's path has)."""
    if args.multirun or args.cfg is not None or args.resolve or args.experimental_rerun:
        return False
    if any(o.get_key_element().lstrip("+~") in ("hydra.mode", "hydra.verbose")
           for o in parsed):
        return False
    return cfg.hydra.mode is None and not cfg.hydra.verbose


def _check_required(cfg: Any, overrides: list[str]) -> None:
    """A `???` left unset (e.g. backend=openai without backend.base_url) is one line naming
    every key still needed, not an OmegaConf error in the middle of a run."""
    from omegaconf import OmegaConf

    # the task is pure YAML, never interpolated: a `???` in it is text
    mine = OmegaConf.masked_copy(cfg, [k for k in cfg if k not in ("hydra", "task")])
    missing = sorted(OmegaConf.missing_keys(mine))
    if missing:
        given = " ".join(o for o in overrides if "=" in o and o.split("=")[0] in GROUPS)
        need = " ".join(f"{k}=..." for k in missing)
        raise ConfigError(f"{', '.join(missing)}: required"
                          f"{' by ' + given if given else ''}; set {need}")


def _check_writable(cfg: Any, multirun: bool) -> None:
    """The run (or sweep) folder can be created: Hydra would otherwise fail with a
    traceback before vbw runs. The first existing ancestor must be a folder we may write."""
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    from omegaconf import OmegaConf

    from hydra.core.utils import setup_globals

    setup_globals()  # the ${now:...} resolver, as Hydra registers it before running
    try:
        target = Path(str(OmegaConf.select(cfg, key)))
    except Exception:  # e.g. ${hydra:...}, only resolvable inside Hydra's run: Hydra checks
        return
    target = target if target.is_absolute() else Path.cwd() / target
    probe = target
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"{key}={target}: {probe} is a file, not a folder")
    try:
        tempfile.TemporaryDirectory(dir=probe).cleanup()
    except OSError as e:
        raise ConfigError(f"{key}={target}: cannot create folders in {probe} "
                          f"({e.strerror or e})") from None


def _jobs(parsed: list[Any], raw: list[str], multirun: bool) -> list[list[str]]:
    """The override list of every job: one for a run; the sweep's product for a multirun."""
    if not multirun or not any(o.is_sweep_override() for o in parsed):
        return [raw]
    if not all(o.is_discrete_sweep() for o in parsed if o.is_sweep_override()):
        # range/interval sweeps belong to a sweeper plugin: check the fixed part only
        return [[o.input_line for o in parsed if not o.is_sweep_override()]]
    bounds.check_sweep(parsed)  # counted, before anything is expanded
    return hydra_internals.sweep_jobs(parsed)


def _compose(loader: Any, name: str, overrides: list[str]) -> Any:
    from hydra.errors import HydraException, MissingConfigException
    from hydra.types import RunMode

    try:
        return loader.load_configuration(name, overrides, run_mode=RunMode.RUN)
    except MissingConfigException as e:
        raise ConfigError(_missing_error(e, loader, overrides)) from None
    except (HydraException, yaml.YAMLError) as e:
        raise ConfigError(_composition_error(e, loader, name, overrides)) from None
    except ValueError as e:  # e.g. a group swept over numbers: task=range(1,3)
        raise ConfigError(f"{' '.join(overrides)}: {one_line(e, typed=False)}") from None


def _searchpath_overrides(overrides: list[str]) -> list[str]:
    return [o for o in overrides if o.split("=", 1)[0].lstrip("+~") == "hydra.searchpath"]


def _missing_error(e: Any, loader: Any, overrides: list[str]) -> str:
    missing = getattr(e, "missing_cfg_file", None) or ""
    group, _, option = missing.rpartition("/")
    if not group:  # the primary config itself (--config-name)
        return f"--config-name {missing}: no such primary config"
    options = loader.get_group_options(group, overrides=_searchpath_overrides(overrides))
    where = ", ".join(s.path for s in loader.get_sources()
                      if s.provider not in ("hydra", "schema"))
    close = difflib.get_close_matches(option, options, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    if group == "task" and (option.endswith((".yaml", ".yml")) or "/" in option):
        hint = f"a task file goes in task.files=[{option}]; "
    else:
        hint += hints.layout(loader.get_sources(), group, option)
    return (f"{group}={option}: no such {group} config; {hint}valid: {', '.join(options)} "
            f"(searched {where})")


def _duplicate_key(e: BaseException) -> str | None:
    """A YAML duplicate-key error anywhere in the cause chain, as 'FILE:LINE: ...'."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, yaml.MarkedYAMLError) and "duplicate key" in str(seen.problem):
            mark = seen.problem_mark
            key = str(seen.problem).split("duplicate key", 1)[1].strip()
            return f"{mark.name}:{mark.line + 1}: duplicate key {key!r}" if mark else None
        seen = seen.__cause__ or seen.__context__
    return None


def _composition_error(e: Any, loader: Any, name: str, overrides: list[str]) -> str:
    dup = _duplicate_key(e)
    if dup is not None:
        return dup
    text = str(e)
    if isinstance(e, yaml.YAMLError):
        return f"invalid YAML in a config file: {one_line(e, typed=False)}"
    if text.startswith("Ambiguous value for argument"):
        arg = text.split("'", 2)[1]
        return (f"{arg}: a comma list sweeps only with -m/--multirun; for a list write "
                "key=[a,b], for a string quote it")
    if "is not in struct" in text or "Could not override" in text:
        bad = next((o for o in overrides if f"'{o.split('=', 1)[0]}'" in text), None)
        if bad is not None:
            return _unknown_key(bad, loader, name, [o for o in overrides if o != bad])
    if "Could not append to config" in text or "Could not delete" in text:
        return one_line(e, typed=False).split(". ")[0]
    cause = f" ({one_line(e.__cause__, typed=False)})" if e.__cause__ is not None else ""
    return one_line(e, typed=False) + cause


def _unknown_key(bad: str, loader: Any, name: str, rest: list[str]) -> str:
    """`gate.wrong_valid_abve=0.2`: name the key and a fix that runs (vbw.cli.hints)."""
    if bad.split("=", 1)[0] == "task.files":
        return (f"{bad}: task.files lists task files for the default selection, and a "
                "task=NAME given beside it already chose one task; drop one of the two")
    try:
        cfg = _compose(loader, name, rest)
    except ConfigError:
        cfg = None
    return hints.unknown_key(bad, cfg)


def _parse_error(e: Any) -> str:
    override = getattr(e, "override", None)
    msg = one_line(e, typed=False)
    return f"{override}: cannot parse this override ({msg})" if override else msg
