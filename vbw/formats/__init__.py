"""Published file formats: JSON Schemas generated from the models that validate the files.

They are committed and shipped inside the package so that editors and other tools can check
a file without running vbw. FORMATS maps each file name to the function that builds it;
`python -m vbw.formats` rewrites the committed files after a model changes.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from vbw.formats.replay import replay_schema
from vbw.formats.task import task_schema

FORMATS: dict[str, Callable[[], dict[str, Any]]] = {"task.schema.json": task_schema,
                                                    "replay.schema.json": replay_schema}
HERE = Path(__file__).resolve().parent


def render(name: str) -> str:
    """The text of format file `name` as the generator makes it (2-space JSON, final newline)."""
    return json.dumps(FORMATS[name](), indent=2, ensure_ascii=False) + "\n"


def published(name: str) -> dict[str, Any]:
    """The committed (shipped) copy of format file `name`, parsed."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def write_all(directory: Path = HERE) -> list[Path]:
    """Write every format file into `directory` (the package by default); the paths written."""
    written = []
    for name in FORMATS:
        path = directory / name
        path.write_text(render(name), encoding="utf-8")
        written.append(path)
    return written
