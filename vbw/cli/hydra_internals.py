"""Every use of Hydra's private `hydra._internal` package, in one place.

How it works and why: docs/design.md, section vbw.cli.hydra_internals.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

SUPPORTED = ((1, 3, 2), (1, 4, 0))  # [lowest, first unsupported): pyproject's pin

# (module, qualified name, parameter names) of every private symbol used below
INTERNALS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("hydra._internal.utils", "get_args_parser", ()),
    ("hydra._internal.utils", "create_config_search_path", ("search_path_dir",)),
    ("hydra._internal.utils", "create_automatic_config_search_path",
     ("calling_file", "calling_module", "config_path")),
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
    ("hydra._internal.core_plugins.file_config_source", "FileConfigSource.load_config",
     ("config_path",)),
    ("hydra._internal.core_plugins.file_config_source",
     "FileConfigSource._normalize_file_name", ("filename",)),
)


def args_parser() -> argparse.ArgumentParser:
    """The argument parser `@hydra.main` uses."""
    from hydra._internal.utils import get_args_parser

    return get_args_parser()


def config_search_path(conf_dir: str) -> Any:
    """The search path `@hydra.main` builds for its config_path."""
    from hydra._internal.utils import create_config_search_path

    return create_config_search_path(conf_dir)


def automatic_config_search_path(calling_module: str, config_path: str) -> Any:
    """The search path `@hydra.main` builds when `--config-path` overrides its
    config_path, resolved as Hydra does from the module declaring `@hydra.main`."""
    from hydra._internal.utils import create_automatic_config_search_path

    return create_automatic_config_search_path(None, calling_module, config_path)


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


@contextmanager
def guarded_yaml(trusted: Path) -> Iterator[None]:
    """While composing, every config file Hydra reads from a folder (`--config-dir`,
    `--config-path`, `hydra.searchpath`, whatever the configs pull in) is first read by
    vbw's own YAML loader: it refuses alias bombs and over-deep nesting that Hydra's
    loader would expand, and names the line. Exactly the files composition reads, so an
    unrelated broken file in the folder blocks nothing, and no file count caps the check.
    Files under `trusted` (vbw's bundled conf/) are not re-read. It wraps the private
    FileConfigSource.load_config, so it lives here with the other uses of Hydra's
    internals (pinned by tests/cli/test_hydra_internals.py)."""
    from hydra._internal.core_plugins.file_config_source import FileConfigSource

    from vbw.validation import load_yaml

    original = FileConfigSource.load_config
    bundled_root = os.path.realpath(trusted)
    checked: set[tuple[str, int, int]] = set()

    def load_config(self: Any, config_path: str) -> Any:
        full = os.path.realpath(os.path.join(self.path, self._normalize_file_name(config_path)))
        try:
            st = os.stat(full)
        except OSError:
            st = None  # Hydra reports a missing config itself
        if st is not None and not full.startswith(bundled_root + os.sep) and \
                (full, st.st_mtime_ns, st.st_size) not in checked:
            load_yaml(Path(full))
            checked.add((full, st.st_mtime_ns, st.st_size))
        return original(self, config_path)

    FileConfigSource.load_config = load_config  # type: ignore[method-assign]
    try:
        yield
    finally:
        FileConfigSource.load_config = original  # type: ignore[method-assign]
