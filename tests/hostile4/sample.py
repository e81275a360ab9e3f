"""A baseline case: a task file that is not YAML at all."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.hostile4 import Case


def _not_yaml(folder: Path, stack: contextlib.ExitStack) -> list[str]:
    (folder / "t.yaml").write_text("{[: ::\n", encoding="utf-8")
    return [f"task.files=[{folder / 't.yaml'}]", "mode=check"]


CASES = [Case("0 baseline", "a task file that does not parse", _not_yaml, seconds=20)]
