"""Prompts render byte-for-byte as the spec writes them; JSON renders like json.dumps."""

from __future__ import annotations

import json

import pytest
from jinja2 import UndefinedError

from tests.conftest import TASK_CONF
from vbw.task.arms import Arm, task_arms
from vbw.task.jsontext.values import JsonBigInt
from vbw.task.bounded import MAX_PROMPT_CHARS, render_bounded
from vbw.task.prompts import compile_template, plain_fits, plain_parts, render, render_plain
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
    ("{{ q }} and {{ s | json }}", {"q": "x", "s": {"a": [1, 2.5, None, "é\\\""]}}),
    ("line 1\r\nline 2\r{{ q }}\n\n", {"q": "x\r\n"}),       # newlines as Jinja reads them
    ("{{ q }}", {}),                                   # undefined
    ("{{ q }}", {"q": 7}),                             # not a string: Jinja renders it
    ("{{ self }}", {"self": "x"}),                     # a name Jinja binds itself
    ("{{ q }}", {"q": 10 ** 5000}),                    # str() refuses it
    ("{{ s | json }}", {"s": {"a": 10 ** 5000}}),      # json.dumps refuses it
    ("{{ s | json }}", {"s": {"a": JsonBigInt("1" * 5000)}}),
    ("{{ s | json }}", {"s": {"a": {1, 2}}}),
    ("{{ q }}{{ q }}", {"q": "a" * (MAX_PROMPT_CHARS // 2)}),   # exactly the budget
    ("{{ q }}{{ q }}!", {"q": "a" * (MAX_PROMPT_CHARS // 2)}),  # one past it
    ("{% for i in range(2) %}{{ q }}{% endfor %}", {"q": "x"}),
]


def _jinja(source: str, context: dict) -> str | None:
    """Jinja's own render (the sandbox, the budget), or None where it fails."""
    template = compile_template(source)
    try:
        return render_bounded(template, context, template.vbw_traced)
    except (ValueError, TypeError, UndefinedError):
        return None


@pytest.mark.parametrize(("source", "context"), RENDERS_CASES, ids=range(len(RENDERS_CASES)))
def test_render_plain_is_jinjas_render_or_declines(source: str, context: dict) -> None:
    """The Jinja-free render gives Jinja's very text, and declines (None) wherever Jinja
    could fail, so render() fails with Jinja's message there."""
    fast, jinja = render_plain(source, context), _jinja(source, context)
    plain = plain_parts(source) is not None and "self" not in context and all(
        type(v) is str for k, v in context.items() if ("str", k) in plain_parts(source))
    assert fast == (jinja if plain else None)


def test_render_plain_gives_jinjas_text_on_random_plain_templates() -> None:
    import random

    rng = random.Random(7)
    pieces = ["{{ a }}", "{{ b | json }}", "{{a}}", "{{ b|json }}", "x", " ", "\n", "\r\n",
              "é", "{", "}", "\t", "😀"]
    values = ["", "a\nb", "{{ a }}", "\r", "é😀", '"q"']
    for _ in range(400):  # each a template Jinja compiles anew
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        context = {"a": rng.choice(values),
                   "b": rng.choice([{"k": rng.choice(values)}, [1, 2.5, None], "s", 3])}
        if plain_parts(source) is None:
            continue
        assert render_plain(source, context) == _jinja(source, context), source


def test_the_bundled_tasks_prompts_are_rendered_without_jinja() -> None:
    """Every prompt of the bundled tasks is plain: rendered by the join, Jinja's text."""
    for name in ("gsm8k", "bfcl_simple"):
        task = load_task(TASK_CONF / f"{name}.yaml")
        for item in task.items(20):
            for which, source in (("free", task.spec.prompts.free),
                                  ("json", task.spec.prompts.json_),
                                  ("package", task.spec.prompts.package)):
                context = item.fields if which == "free" else {
                    **item.fields, "schema": item.schemas[task.spec.answer_schema]}
                assert render_plain(source, context) is not None, (name, which)
                assert render_plain(source, context) == _jinja(source, context)


@pytest.mark.parametrize(("source", "context"), RENDERS_CASES, ids=range(len(RENDERS_CASES)))
def test_plain_fits_says_yes_exactly_where_render_plain_gives_a_text(
        source: str, context: dict) -> None:
    """The audit skips building a prompt only where render_plain would give it, which
    Jinja's render then gives (it cannot fail): over the budget, a value str() or
    json.dumps refuses, an undefined name, or a template that is not plain is a no."""
    assert plain_fits(source, context) == (render_plain(source, context) is not None)


def test_plain_fits_agrees_with_render_plain_on_random_templates_and_schemas() -> None:
    """With `schema` given over the fields (a task's json and package prompts), and a
    field of that name beside it, and lengths around the budget."""
    import random

    rng = random.Random(11)
    pieces = ["{{ a }}", "{{ schema | json }}", "{{ schema }}", "{{ b | json }}", "x", "\n",
              "é😀", "{{ missing }}"]
    values = ["", "a\nb", "é😀", "x" * (MAX_PROMPT_CHARS // 3), 5, None, {"k": [1.5]}]
    for _ in range(600):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        fields = {"a": rng.choice(values), "b": rng.choice(values)}
        if rng.random() < 0.3:
            fields["schema"] = rng.choice(values)
        schema = rng.choice([{"type": "object"}, "s" * (MAX_PROMPT_CHARS // 2), 3])
        assert plain_fits(source, fields) == (render_plain(source, fields) is not None)
        context = {**fields, "schema": schema}
        assert plain_fits(source, fields, schema) == (
            render_plain(source, context) is not None), (source, fields, schema)
    assert not plain_fits(None, {})  # no package prompt: the render says so
