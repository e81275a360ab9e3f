"""The generated references (docs/generate/reference.py) cover every key and kind, and the
hand-written key table of docs/reference/task-format.md cannot drift from the models: it
names exactly the keys the models have, and calls required exactly the required ones."""

from __future__ import annotations

import re

from docs.generate.reference import config_reference, plugin_groups, task_reference
from docs.generate.blocks import DOCS


def _model_keys() -> dict[str, bool]:
    """Task keys as the prose table names them (`dataset.path`, `schemas.<S>`) -> required."""
    from vbw.task.spec import TaskSpec

    keys: dict[str, bool] = {}
    for name, info in TaskSpec.model_fields.items():
        sub = info.annotation
        if name == "schemas":
            keys["schemas.<S>"] = info.is_required()
        elif name in ("dataset", "prompts", "extract"):
            for child, cinfo in sub.model_fields.items():  # type: ignore[union-attr]
                keys[f"{name}.{cinfo.alias or child}"] = cinfo.is_required()
        else:
            keys[info.alias or name] = info.is_required()
    return keys


def test_the_hand_written_key_table_matches_the_models() -> None:
    page = (DOCS / "reference" / "task-format.md").read_text(encoding="utf-8")
    table = page.split("## Keys explained", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^\| `([^`]+)` \| ([^|]+) \|", table, re.MULTILINE))
    keys = _model_keys()
    assert set(rows) == set(keys), (set(rows) ^ set(keys))
    wrong = [k for k, req in keys.items() if rows[k].strip().startswith("yes") != req]
    assert not wrong, f"required column disagrees with the models: {wrong}"


def test_every_registered_kind_and_key_is_in_the_task_reference() -> None:
    from vbw.task.check import CHECKERS
    from vbw.task.coerce import COERCIONS
    from vbw.task.extract import STEPS
    from vbw.task.schema.sources import SCHEMA_SOURCES

    text = task_reference()
    for reg in (CHECKERS, COERCIONS, STEPS, SCHEMA_SOURCES):
        for kind, cls in reg.classes.items():
            if cls.__module__.startswith("vbw."):
                assert f"#### `{kind}`" in text, (reg.name, kind)
    for key in ("name", "answer_schema", "first", "join", "package"):
        assert f"| `{key}` |" in text, key
    assert "| `first` | int \\| None | `None` | at least 1 |" in text


def test_the_config_reference_has_every_root_key() -> None:
    from vbw.config import RunConfig

    text = config_reference()
    for name, info in RunConfig.model_fields.items():
        assert f"| `{info.alias or name}` |" in text, name
    assert "| `resamples` | int | `2000` | at least 100; at most 1000000 |" in text
    assert "#### `backend=openai`" in text


def test_the_plugin_table_names_every_group() -> None:
    text = plugin_groups()
    for group in ("vbw.checkers", "vbw.extractors", "vbw.coercions", "vbw.schemas",
                  "vbw.backends", "vbw.engines", "vbw.dialects"):
        assert f"`{group}`" in text, group
