"""Prompts render byte-for-byte as the spec writes them; JSON renders like json.dumps."""

from __future__ import annotations

import json

import pytest
from jinja2 import UndefinedError

from tests.conftest import TASK_CONF
from vbw.task.arms import Arm, task_arms
from vbw.task.bounded import MAX_PROMPT_CHARS
from vbw.task.jsonvalues import JsonBigInt
from vbw.task.prompts import plain_parts, render, renders
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


def test_plain_parts_reads_only_plain_templates() -> None:
    assert plain_parts("Q: {{ question }}\n{{ schema | json }}") == (
        ("text", "Q: "), ("str", "question"), ("text", "\n"), ("json", "schema"))
    for source in ("{{ q | upper }}", "{{ q ~ 'x' }}", "{% if q %}{{ q }}{% endif %}",
                   "{{ q * 3 }}", "{{ q.a }}", "{{ schema | json(indent=2) }}", "{{ oops"):
        assert plain_parts(source) is None, source


RENDERS_CASES = [
    ("{{ q }} and {{ s | json }}", {"q": "x", "s": {"a": [1, 2.5, None]}}),
    ("{{ q }}", {}),                                   # undefined
    ("{{ q }}", {"q": 7}),                             # not a string: rendered to decide
    ("{{ q }}", {"q": 10 ** 5000}),                    # str() refuses it
    ("{{ s | json }}", {"s": {"a": 10 ** 5000}}),      # json.dumps refuses it
    ("{{ s | json }}", {"s": {"a": JsonBigInt("1" * 5000)}}),
    ("{{ s | json }}", {"s": {"a": {1, 2}}}),
    ("{{ q }}{{ q }}", {"q": "a" * (MAX_PROMPT_CHARS // 2)}),   # exactly the budget
    ("{{ q }}{{ q }}!", {"q": "a" * (MAX_PROMPT_CHARS // 2)}),  # one past it
    ("{% for i in range(2) %}{{ q }}{% endfor %}", {"q": "x"}),
]


@pytest.mark.parametrize(("source", "context"), RENDERS_CASES, ids=range(len(RENDERS_CASES)))
def test_renders_only_says_yes_when_the_render_succeeds(source: str, context: dict) -> None:
    """renders() is a proof: True only where render() succeeds, and it says True on
    plain templates over strings and JSON values within the budget."""
    try:
        render(source, context)
        ok = True
    except (ValueError, TypeError, UndefinedError):
        ok = False
    if renders(source, context):
        assert ok
    expected = ok and plain_parts(source) is not None and all(
        type(v) is str for k, v in context.items() if ("str", k) in plain_parts(source))
    assert renders(source, context) == expected


def test_the_bundled_tasks_prompts_are_proven_to_render() -> None:
    """The check skips rendering the bundled tasks' prompts (Task.prompts_render), and
    each one it skips does render."""
    for name in ("gsm8k", "bfcl_simple"):
        task = load_task(TASK_CONF / f"{name}.yaml")
        for item in task.items(20):
            assert task.prompts_render(item)
            task.prompts(item)
