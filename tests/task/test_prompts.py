"""Prompts render byte-for-byte as the spec writes them; JSON renders like json.dumps."""

from __future__ import annotations

import json

import pytest

from tests.conftest import TASK_CONF
from vbw.task.arms import Arm, task_arms
from vbw.task.prompts import render
from vbw.task.runner import load_task

GSM_FREE = ("{question}\n\nSolve the problem. Think step by step, then finish with a final "
            "line of the form 'Answer: <number>'.")
GSM_JSON = ("{question}\n\nSolve the problem. Respond with ONLY a JSON object matching this "
            "JSON Schema, with no other text:\n{schema}")
GSM_PACKAGE = ("Now give your final answer as ONLY a JSON object matching this JSON Schema, "
               "with no other text:\n{schema}")
BFCL_FREE = ("You can call this function:\n{function}\n\nRequest: {question}\n\nWrite the "
             "single call to `{name}` that fulfils the request, in Python syntax, e.g. "
             "{name}(arg=value). Write only the call.")
BFCL_JSON = ("You can call this function:\n{function}\n\nRequest: {question}\n\nGive the "
             "arguments for the call to `{name}` as ONLY a JSON object matching this JSON "
             "Schema, with no other text:\n{schema}")
BFCL_PACKAGE = ("Now give the arguments of that call as ONLY a JSON object matching this JSON "
                "Schema, with no other text:\n{schema}")


def test_json_filter_is_json_dumps_not_tojson() -> None:
    obj = {"b": "<é>&'", "a": [1, 2.5, None, True]}
    assert render("{{ x | json }}", {"x": obj}) == json.dumps(obj)
    with pytest.raises(Exception):
        render("{{ x | tojson }}", {"x": obj})


def test_strict_undefined() -> None:
    with pytest.raises(Exception):
        render("{{ missing }}", {})


def test_sandbox_blocks_attribute_escape() -> None:
    with pytest.raises(Exception):
        render("{{ x.__class__.__mro__ }}", {"x": 1})


def test_gsm8k_prompts_exact() -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    for item in task.items(5):
        q = item.fields["question"]
        for arm in task_arms(task.schema_names, "answer", ["unconstrained", "prompt_json",
                                                           "constrained", "reason_then_constrain"]):
            msgs = task.messages(item, arm, free_text="FREE")
            free = GSM_FREE.format(question=q)
            if arm.kind == "unconstrained":
                assert msgs == [{"role": "user", "content": free}]
            elif arm.kind == "reason_then_constrain":
                schema = json.dumps(item.schemas["answer"])
                assert msgs == [{"role": "user", "content": free},
                                {"role": "assistant", "content": "FREE"},
                                {"role": "user", "content": GSM_PACKAGE.format(schema=schema)}]
            else:
                schema = json.dumps(item.schemas[arm.schema])
                assert msgs == [{"role": "user",
                                 "content": GSM_JSON.format(question=q, schema=schema)}]


def test_bfcl_prompts_exact() -> None:
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    for item in task.items(5):
        f = item.fields
        ctx = {"function": json.dumps(f["function"]), "question": f["question"],
               "name": f["name"], "schema": json.dumps(item.schemas["arguments"])}
        assert task.messages(item, Arm("unconstrained", None))[0]["content"] == \
            BFCL_FREE.format(**ctx)
        assert task.messages(item, Arm("constrained", "arguments"))[0]["content"] == \
            BFCL_JSON.format(**ctx)
        assert task.messages(item, Arm("reason_then_constrain", "arguments"), "T")[2][
            "content"] == BFCL_PACKAGE.format(**ctx)


def test_prompts_are_each_distinct_prompt_the_arms_send() -> None:
    """Task.prompts (what mode=check renders) holds exactly the texts the arms' messages
    carry, each distinct prompt once."""
    from vbw.task.arms import ARM_KINDS, task_arms

    task = load_task(TASK_CONF / "gsm8k.yaml")
    item = task.items(1)[0]
    got = task.prompts(item)
    assert list(got) == ["free", "json[answer]", "json[reasoning]", "package"]
    for arm in task_arms(task.schema_names, "answer", list(ARM_KINDS)):
        msgs = task.messages(item, arm, free_text="x")
        want = {"unconstrained": "free", "reason_then_constrain": "package"}.get(
            arm.kind, f"json[{arm.schema}]")
        assert msgs[-1]["content"] == got[want]
        assert msgs[0]["content"] in (got["free"], got[want])
