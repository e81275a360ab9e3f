"""Which tasks a run scores, and the file each one lives in.

A run selects tasks in one of two shapes. A task config (`task=gsm8k`, or `task=my_qa`
from `--config-dir`/`hydra.searchpath`) is a group option whose composed node IS the
task, overrides included (`task.check.tolerance=0.01`). A selection (`task=demo`, or
`task.files=[...]`) lists task config names and YAML paths. Either way a task's data
paths are relative to its own file, so every task is resolved together with that file;
the config roots (bundled conf/ and the user's folders, in Hydra's search order) are
passed in, so this module needs no Hydra.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from vbw.errors import ConfigError

if TYPE_CHECKING:
    from vbw.task.runner import Task

TASK_GROUP = "task"
YAML_SUFFIXES = (".yaml", ".yml")


def config_file(roots: list[Path], group: str, option: str) -> Path | None:
    """The file Hydra composes for `group=option`: the first root holding it."""
    for root in roots:
        path = root / group / f"{option}.yaml"
        if path.is_file():
            return path
    return None


def group_options(roots: list[Path], group: str) -> list[str]:
    """Every option of `group` across the roots (bundled and the user's), sorted."""
    names = {p.stem for root in roots for p in (root / group).glob("*.yaml")}
    return sorted(names)


def is_task_path(value: str) -> bool:
    """A task given as a file (`./my_task.yaml`, `a/b.yml`) rather than a config name."""
    return value.endswith(YAML_SUFFIXES) or "/" in value


def resolve_entry(entry: str, roots: list[Path], cwd: Path) -> Path:
    """A `task.files` entry: a YAML path (relative to cwd) or a task config name."""
    if is_task_path(entry):
        p = Path(entry).expanduser()
        p = p if p.is_absolute() else cwd / p
        if not p.is_file():
            raise ConfigError(f"task.files: task file not found: {p}")
        return p
    found = config_file(roots, TASK_GROUP, entry)
    if found is None:
        raise ConfigError(f"task.files: unknown task {entry!r}; task configs: "
                          f"{', '.join(group_options(roots, TASK_GROUP))} (or give a path "
                          "ending in .yaml)")
    return found


def _files(node: dict[str, Any]) -> list[str]:
    files = node["files"]
    if isinstance(files, str):
        raise ConfigError(f"task.files: expected a list, e.g. task.files=[{files}] "
                          f"(brackets needed; got {files!r})")
    if not isinstance(files, list) or not files or \
            not all(isinstance(f, str) for f in files):
        raise ConfigError(f"task.files: expected a non-empty list of task names or YAML "
                          f"paths, e.g. task.files=[my_task.yaml] (got {files!r})")
    if len(node) > 1:
        others = ", ".join(sorted(k for k in node if k != "files"))
        raise ConfigError(f"task.files selects task files; it cannot be combined with task "
                          f"fields ({others}): choose task=NAME or task.files=[...]")
    return files


def select_tasks(node: Any, choice: str | None, roots: list[Path], cwd: Path,
                 overrides: list[str] | None = None) -> list[Task]:
    """The tasks of a composed `task` node (see the module docstring for the two shapes).

    `choice` is the task option Hydra chose (it names the file an inline task came from);
    `overrides` are the command line's task.* overrides, named in errors."""
    from vbw.task.runner import Task, load_task  # the task stack: not for is_task_path
    from vbw.task.spec import TaskSpec
    from vbw.validation import validate

    if not isinstance(node, dict):
        raise ConfigError(f"task: expected a task config or task.files=[...] (got {node!r})")
    if "files" in node:
        return [load_task(resolve_entry(e, roots, cwd)) for e in _files(node)]
    path = config_file(roots, TASK_GROUP, choice) if choice else None
    if path is None:
        raise ConfigError(f"task: cannot find the file of task option {choice!r} in "
                          f"{', '.join(str(r) for r in roots)}")
    source = str(path)
    if overrides:
        source += f" (with {' '.join(overrides)})"
    return [Task(validate(TaskSpec, node, source=source), path)]

