"""The published replay schema: the committed file is what the generator makes, every line
of every bundled replay satisfies it, and a broken line fails it as it fails vbw."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import REPLAYS
from vbw.errors import ReplayError
from vbw.formats import HERE, published, render
from vbw.replay import read_replay

NAME = "replay.schema.json"
HEADER = {"meta": {"format": "vbw-replay/1", "task": "gsm8k", "arms": ["unconstrained"]}}
ITEM = {"id": "gsm8k_test_0", "arms": {"unconstrained": {"text": "Answer: 18"}}}


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = published(NAME)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_committed_schema_is_generated() -> None:
    assert (HERE / NAME).read_text(encoding="utf-8") == render(NAME), \
        "vbw/formats/replay.schema.json is stale: run python -m vbw.formats"


@pytest.mark.parametrize("path", sorted(REPLAYS.glob("*/*/*.jsonl")),
                         ids=lambda p: str(p.relative_to(REPLAYS)))
def test_every_bundled_replay_line_validates(validator, path: Path) -> None:
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        errors = [e.message for e in validator.iter_errors(json.loads(line))]
        assert not errors, f"{path}:{lineno}: {errors[:1]}"


def test_minimal_lines_validate(validator) -> None:
    for line in (HEADER, ITEM, {"end": {"ended": "x", "wall_seconds": 1.0, "items": 1}}):
        validator.validate(line)


_DROP = object()


def _with(obj: dict, path: str, value: object) -> dict:
    """A copy of `obj` with the dotted `path` set to `value` (or removed: _DROP)."""
    out = json.loads(json.dumps(obj))
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    if value is _DROP:
        del node[last]
    else:
        node[last] = value
    return out


BROKEN = {
    "item without id": _with(ITEM, "id", _DROP),
    "bad format value": _with(HEADER, "meta.format", "vbw-replay/9"),
    "unknown header key": _with(HEADER, "meta.task_hsh", "abc"),
    "unknown arm key": _with(ITEM, "arms.unconstrained.txt", "x"),
    "v1 header without arms": _with(HEADER, "meta.arms", _DROP),
    "v1 header without format": _with(HEADER, "meta.format", _DROP),
    "v1 header, arms null": _with(HEADER, "meta.arms", None),
    "header line with a second key": _with(HEADER, "arms", []),
    "end line without items": {"end": {"ended": "x", "wall_seconds": 1.0}},
}


@pytest.mark.parametrize("line", list(BROKEN.values()), ids=list(BROKEN))
def test_broken_line_fails_the_schema_and_vbw(validator, line: dict, tmp_path: Path) -> None:
    assert not validator.is_valid(line)
    lines = [line] if "meta" in line else [HEADER, line]
    p = tmp_path / "r.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(ReplayError):
        read_replay(p)
