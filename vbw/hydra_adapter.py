"""Every use of Hydra's private `hydra._internal` package, in one place.

vbw composes a command line with Hydra's own loader before running it (vbw.compose: a
bad override is one line, exit 2) and runs a plain run on that composition (vbw.launch:
no second composition). Hydra's public API offers neither, so both reach into
`hydra._internal`, which may change in any Hydra release. They do it only through the
functions below, each a thin call of one private symbol; INTERNALS lists those symbols
with the parameters vbw passes, and tests/test_hydra_adapter.py checks that the installed
Hydra is a supported version (SUPPORTED, pyproject's hydra-core>=1.3.2,<1.4) and that
each symbol is there with that signature. A new Hydra is supported by running that test
against it, fixing what it names here, and widening SUPPORTED and pyproject together.

Hydra is imported inside the functions, as before, so importing this module costs
nothing on paths that compose nothing.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

SUPPORTED = ((1, 3, 2), (1, 4, 0))  # [lowest, first unsupported): pyproject's pin

# (module, qualified name, parameter names) of every private symbol used below
INTERNALS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("hydra._internal.utils", "get_args_parser", ()),
    ("hydra._internal.utils", "create_config_search_path", ("search_path_dir",)),
    ("hydra._internal.utils", "detect_calling_file_or_module_from_task_function",
     ("task_function",)),
    ("hydra._internal.utils", "detect_task_name", ("calling_file", "calling_module")),
    ("hydra._internal.utils", "run_and_report", ("func",)),
    ("hydra._internal.config_loader_impl", "ConfigLoaderImpl",
     ("config_search_path",)),
    ("hydra._internal.core_plugins.basic_sweeper", "BasicSweeper.split_arguments",
     ("overrides", "max_batch_size")),
    ("hydra._internal.hydra", "Hydra", ("task_name", "config_loader")),
    ("hydra._internal.callbacks", "Callbacks", ("config",)),
)


def args_parser() -> argparse.ArgumentParser:
    """The argument parser `@hydra.main` uses."""
    from hydra._internal.utils import get_args_parser

    return get_args_parser()


def config_search_path(conf_dir: str) -> Any:
    """The search path `@hydra.main` builds for its config_path."""
    from hydra._internal.utils import create_config_search_path

    return create_config_search_path(conf_dir)


def config_loader(search_path: Any) -> Any:
    """Hydra's config loader on `search_path` (what `@hydra.main` composes with)."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    return ConfigLoaderImpl(config_search_path=search_path)


def sweep_jobs(parsed: list[Any]) -> list[list[str]]:
    """The override list of every job of a discrete sweep, as Hydra's basic sweeper
    splits it (one batch)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    return [list(job) for job in BasicSweeper.split_arguments(parsed, None)[0]]


def task_name(task_function: Callable[[Any], Any]) -> str:
    """The job name `@hydra.main` gives `task_function`."""
    from hydra._internal.utils import (
        detect_calling_file_or_module_from_task_function,
        detect_task_name,
    )

    return detect_task_name(*detect_calling_file_or_module_from_task_function(task_function))


def new_hydra(name: str, loader: Any) -> Any:
    """Hydra's app object for a composition vbw made (GlobalHydra holds it)."""
    from hydra._internal.hydra import Hydra

    return Hydra(task_name=name, config_loader=loader)


def run_and_report(func: Callable[[], Any]) -> Any:
    """Hydra's error report around `func`, as `@hydra.main` gives it."""
    from hydra._internal.utils import run_and_report as report

    return report(func)


def callbacks(cfg: Any) -> Any:
    """The callbacks configured under hydra.callbacks, instantiated as Hydra does."""
    from hydra._internal.callbacks import Callbacks

    return Callbacks(cfg)
