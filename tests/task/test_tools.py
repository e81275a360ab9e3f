"""The task's `tool` section (vbw.task.tools): the function a tool_call arm offers, its
defaults, paths into the item, and what a tool_call arm's prompt hash covers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import TASK_CONF, portable_task
from vbw.errors import DataError
from vbw.task.arms import parse_arm
from vbw.task.runner import load_task


def test_defaults_are_the_schema_label_and_the_task_label() -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    (item,) = task.items(1)
    assert task.tool(item, "answer") == ("answer", "answer accuracy")


def test_bfcl_offers_each_item_s_own_function() -> None:
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    item = task.items(2)[1]
    name, description = task.tool(item, "arguments")
    assert name == "math.factorial" == item.fields["function"]["name"]
    assert description == item.fields["function"]["description"]
    # the same prompt as constrained[arguments]; the function joins the hash
    tool, constrained = parse_arm("tool_call[arguments]"), parse_arm("constrained[arguments]")
    assert task.messages(item, tool) == task.messages(item, constrained)
    assert task.prompt_hash(item, [tool]) != task.prompt_hash(item, [constrained])


def test_a_literal_and_a_path_that_gives_nothing(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["tool"] = {"name": "solve", "description": {"path": "nowhere"}}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    task = load_task(path)
    (item,) = task.items(1)
    with pytest.raises(DataError, match=r"item gsm8k_test_0: tool.description: path "
                                        r"'nowhere' gave nothing"):
        task.tool(item, "answer")
    data["tool"] = {"name": "solve", "description": "Solve it."}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert load_task(path).tool(item, "answer") == ("solve", "Solve it.")
