"""What a command-line error suggests: a fix that runs as written.

An override of a key the composed config lacks (`task.labl=x`) is either a typo, whose fix
is the key vbw reads, or a key vbw reads that this config leaves unset (`task.tool=...` on
a task without tools), whose fix is Hydra's `+key=value`. Which one is decided by the
pydantic model that will check the key (vbw.config.RunConfig, the task's
vbw.task.spec.TaskSpec): `+` is suggested only where that model reads the key, so
following the hint never ends in a second error about the same key. A `--config-dir`
without the group's sub-folder (a folder of task files) is told the layout.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from vbw.task.locate import TASK_GROUP, YAML_SUFFIXES


def unknown_key(bad: str, cfg: Any) -> str:
    """The line for override `bad` (KEY=VALUE) of a key not in the composed `cfg` (the
    config without it; None if that does not compose either)."""
    from omegaconf import DictConfig, OmegaConf

    key, _, value = bad.partition("=")
    parent, _, leaf = key.rpartition(".")
    node = (OmegaConf.select(cfg, parent) if parent else cfg) if cfg is not None else None
    present = [str(k) for k in node.keys() if k != "hydra"] if isinstance(node, DictConfig) \
        else []
    if parent.split(".")[0] == TASK_GROUP and isinstance(cfg, DictConfig) \
            and isinstance(cfg.get(TASK_GROUP), DictConfig) and "files" in cfg[TASK_GROUP]:
        return (f"{bad}: the task here is a selection of task files (task.files), which "
                f"takes no task fields; choose one task beside it: task=NAME {bad}")
    read = _keys_read(cfg, parent)
    where = f"valid under {parent or 'the root'}"
    if read is None:  # not a key vbw checks (Hydra's own): Hydra's `+` is the way to add it
        close = difflib.get_close_matches(leaf, present, n=1)
        hint = f"did you mean {_dotted(parent, close[0])!r}? " if close else ""
        listing = f"{where}: {', '.join(present)}; " if present else ""
        return f"{bad}: no such config key; {hint}{listing}to add a new key write +{bad}"
    if leaf in read:  # vbw reads it; this config leaves it unset
        return f"{bad}: {key} is not set in this config; to set it write +{bad}"
    close = difflib.get_close_matches(leaf, read, n=1)
    hint = ""
    if close:
        fix = f"{_dotted(parent, close[0])}={value}"
        hint = (f"did you mean {_dotted(parent, close[0])!r}? write "
                f"{fix if close[0] in present else '+' + fix}; ")
    return f"{bad}: no such config key; {hint}{where}: {', '.join(read)}"


def _dotted(parent: str, leaf: str) -> str:
    return f"{parent}.{leaf}" if parent else leaf


def _keys_read(cfg: Any, parent: str) -> list[str] | None:
    """The keys vbw's model reads under `parent`, or None where vbw checks none (Hydra's
    node, a free mapping, a config that does not compose)."""
    from omegaconf import DictConfig, OmegaConf

    from vbw.config import RunConfig
    from vbw.task.spec import TaskSpec
    from vbw.validation import valid_keys

    parts = parent.split(".") if parent else []
    if not isinstance(cfg, DictConfig) or parts[:1] == ["hydra"]:
        return None
    data = OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]),
                                  resolve=False)
    if parts[:1] == [TASK_GROUP]:
        keys = valid_keys(TaskSpec, data.get(TASK_GROUP), parts[1:])
    else:
        keys = valid_keys(RunConfig, data, parts)
        keys += [TASK_GROUP] if keys and not parts else []
    return keys or None


def layout(sources: Any, group: str, option: str) -> str:
    """A user's config folder among `sources` (Hydra's config sources) with no `<group>/`
    sub-folder (a folder of task files given as --config-dir): the layout Hydra reads,
    and for a task, the file form instead; "" when every folder has it."""
    bare = [s for s in sources
            if s.provider not in ("hydra", "schema", "main") and s.scheme() == "file"
            and not (Path(s.path) / group).is_dir()]
    if not bare:
        return ""
    folder = Path(bare[0].path)
    name = f"--config-dir {folder}" if bare[0].provider == "command-line" else str(folder)
    hint = (f"{name} has no {group}/ folder: a {group} config is read from "
            f"<dir>/{group}/<name>.yaml (here {folder / group / option}.yaml); ")
    if group != TASK_GROUP:
        return hint
    here = [folder / f"{option}{suffix}" for suffix in YAML_SUFFIXES]
    file = next((str(f) for f in here if f.is_file()), "path/to/file.yaml")
    return hint + f"or run the file itself: task={file}; "
