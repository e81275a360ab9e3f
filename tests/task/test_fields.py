"""vbw.task.fields: one code per (arm, field), read from the JSON object or the free text,
and the checker's parts of a call (BFCL's parameters by declared type)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.task.usertasks import ticket_task
from vbw.errors import DataError
from vbw.task.fields import ABSENT, NOT_READ, RIGHT, WRONG, all_fields
from vbw.task.runner import load_task

ROOT = Path(__file__).resolve().parents[2]

CATEGORY = {"path": "category", "gold": {"path": "category"}, "check": {"kind": "string"},
            "free": [{"kind": "regex", "pattern": "Category:[ \\t]*(\\w+)", "group": 1,
                      "match": "last"}]}
AMOUNT = {"path": "amount", "gold": {"path": "amount"},
          "check": {"kind": "numeric", "tolerance": 0.01}}


def fields_task(folder: Path, **fields: dict) -> Path:
    """tests.task.usertasks' ticket task with `fields` (default: category, with free-text
    steps, and amount, without)."""
    path = ticket_task(folder)
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["fields"] = fields or {"category": CATEGORY, "amount": AMOUNT}
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def test_a_named_field_is_read_from_the_object_and_checked_against_its_own_gold(
        tmp_path: Path) -> None:
    task = load_task(fields_task(tmp_path))
    item = task.items(1)[0]  # billing, 19.99
    assert item.field_gold == {"category": "billing", "amount": 19.99}
    assert task.fields.names == ["category", "amount"]
    row = task.fields.row({"category": "billing", "amount": 19.985}, None, None, item, False)
    assert row.codes == [RIGHT, RIGHT] and row.values == ["billing", 19.985]
    # the tolerance is the boundary: 0.01 away is wrong (|a - g| < tolerance)
    row = task.fields.row({"category": "account", "amount": 20.0}, None, None, item, False)
    assert row.codes == [WRONG, WRONG]
    row = task.fields.row({"category": "billing"}, None, None, item, False)
    assert row.codes == [RIGHT, WRONG] and row.values == ["billing", None]
    assert task.fields.row(None, None, None, item, False).codes == [WRONG, WRONG]


def test_a_free_text_arm_states_a_field_only_through_its_free_steps(tmp_path: Path) -> None:
    task = load_task(fields_task(tmp_path))
    item = task.items(1)[0]
    row = task.fields.row(None, "Category: billing\nAmount: 19.99", None, item, True)
    assert row.codes == [RIGHT, NOT_READ]  # amount has no free steps: n/a, not wrong
    assert task.fields.row(None, "no idea", None, item, True).codes == [WRONG, NOT_READ]


def test_all_fields_is_right_only_when_every_field_the_item_has_is_right() -> None:
    codes = np.array([[[RIGHT, RIGHT, ABSENT], [RIGHT, WRONG, ABSENT],
                       [RIGHT, NOT_READ, RIGHT], [ABSENT, ABSENT, ABSENT]]], dtype=np.int8)
    assert all_fields(codes).tolist() == [[RIGHT, WRONG, NOT_READ, ABSENT]]


def test_a_task_without_fields_has_none_and_hashes_as_before(tmp_path: Path) -> None:
    plain = load_task(ticket_task(tmp_path / "a"))
    named = load_task(fields_task(tmp_path / "b"))
    assert not plain.fields and plain.fields.names == []
    assert "fields" not in plain.spec.canonical()
    # fields are scoring, not generation: the replay of the plain task stays valid
    assert plain.generation_hash() == named.generation_hash()


def test_a_field_gold_path_that_finds_nothing_names_the_field_and_the_row(
        tmp_path: Path) -> None:
    bad = dict(AMOUNT, gold={"path": "amuont"})
    task = load_task(fields_task(tmp_path, amount=bad))
    with pytest.raises(DataError) as e:
        task.items(1)
    msg = str(e.value)
    assert "\n" not in msg
    assert "fields.amount.gold.path: 'amuont' finds nothing in row 0 (t0)" in msg
    assert "amount" in msg.split("fields are:")[1]


BFCL = ROOT / "conf" / "task" / "bfcl_simple.yaml"


@pytest.mark.parametrize("rules", ["simplified", "bfcl_official"])
def test_call_args_parts_are_the_gold_parameters_by_declared_type(rules: str) -> None:
    """BFCL simple's third item by hand (its gold and declared types asserted first)."""
    task = load_task(BFCL)
    checker = task.spec.check.model_copy(update={"rules": rules})
    item = task.items(3)[2]
    schema = item.schemas[task.spec.answer_schema]
    assert item.gold == {"x": [4], "y": [5], "z": ["", 0]}
    assert {p: schema["properties"][p]["type"] for p in "xyz"} == {
        "x": "integer", "y": "integer", "z": "integer"}
    parts = checker.parts({"x": 4, "y": 6}, item.gold, schema)
    assert [(p.name, p.group, p.right) for p in parts] == [
        ("x", "integer", True), ("y", "integer", False), ("z", "integer", True)]
    # an optional parameter given a value outside its allowed ones is wrong
    assert [p.right for p in checker.parts({"x": 4, "y": 5, "z": 2}, item.gold, schema)] \
        == [True, True, False]
    # no answer: every gold parameter is wrong, so each group the item has is wrong
    assert [p.right for p in checker.parts(None, item.gold, schema)] == [False] * 3
    # a list of calls (BFCL v4) is not split
    assert checker.parts([{"f": {}}], [{"f": {}}], schema) is None
