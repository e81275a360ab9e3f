"""Each free-text step, the GSM8K chain in the spec's order, and first-JSON-object rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TASK_CONF
from vbw.task.extract import (BoxedStep, JsonExtract, LastNumberStep, PythonCallStep,
                              RegexStep, first_json_object)
from vbw.task.runner import load_task


@pytest.fixture(scope="module")
def gsm8k():
    task = load_task(TASK_CONF / "gsm8k.yaml")
    return task, task.items(1)[0]


@pytest.fixture(scope="module")
def bfcl():
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    return task, task.items(3)


def test_regex_first_and_last_match() -> None:
    text = "a=1 then a=2"
    assert RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match="first").apply(text, {}) == "1"
    assert RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match="last").apply(text, {}) == "2"
    assert RegexStep(kind="regex", pattern=r"zzz").apply(text, {}) is None
    assert RegexStep(kind="regex", pattern=r"a=(\d)", group=3).apply(text, {}) is None


def test_regex_rejects_bad_pattern() -> None:
    with pytest.raises(ValueError, match="not a valid regex"):
        RegexStep(kind="regex", pattern="(")


def test_boxed_takes_only_the_last_box() -> None:
    step = BoxedStep(kind="boxed")
    assert step.apply(r"\boxed{3} then \boxed{x}", {}) == "x"
    assert step.apply("no box", {}) is None


def test_last_number_strips_dollars() -> None:
    assert LastNumberStep(kind="last_number").apply("pay $1,200 or $-5", {}) == "-5"
    assert LastNumberStep(kind="last_number").apply("none", {}) is None


@pytest.mark.parametrize("text,expected", [
    ("so the answer is\nAnswer: 1,234", 1234.0),            # rule 1, commas removed
    ("Answer: 3\n... final Answer = $ 7", 7.0),             # rule 1, LAST match
    ("Answer: **18**", 18.0),                               # bold marker allowed
    (r"\boxed{1400} bananas to last for 2 months", 1400.0),  # rule 2 beats rule 3
    # the last box yields no number and earlier boxes are not tried: rule 3 takes 12
    (r"\boxed{12} and later \boxed{x}", 12.0),
    ("she has 3 apples and 4.5 pears", 4.5),                # rule 3: last number
    ("no digits at all", None),
    ("answer: -3", -3.0),
])
def test_gsm8k_free_chain(gsm8k, text: str, expected: float | None) -> None:
    task, item = gsm8k
    assert task.free_answer(text, item) == expected


def test_gsm8k_json_extraction(gsm8k) -> None:
    task, item = gsm8k
    assert task.json_answer({"answer": 18}) == 18
    assert task.json_answer({"answer": "$1,018"}) == 1018.0
    assert task.json_answer({"answer": True}) is None
    assert task.json_answer({"answer": [1]}) is None
    assert task.json_answer({"other": 1}) is None
    assert task.json_answer(None) is None


def test_first_json_object_rules() -> None:
    assert first_json_object('x {"a": 1} {"b": 2}') == {"a": 1}
    assert first_json_object('{bad {"a": {"b": 1}}') == {"a": {"b": 1}}
    assert first_json_object('[{"a": 1}]') == {"a": 1}      # a list is not an object
    assert first_json_object('{"a": 1') is None
    assert first_json_object("none") is None
    assert first_json_object(' {"a": 1}') == {"a": 1}
    assert first_json_object('{"answer": 16 * 16 * 2}') is None


def test_python_call_positional_and_keywords(bfcl) -> None:
    task, items = bfcl
    item = items[0]  # calculate_triangle_area(base, height, unit)
    assert task.free_answer("calculate_triangle_area(10, 5)", item) == {"base": 10, "height": 5}
    assert task.free_answer("x = calculate_triangle_area(10,\n height=5, unit='cm')",
                            item) == {"base": 10, "height": 5, "unit": "cm"}
    # extra positionals are dropped
    assert task.free_answer("calculate_triangle_area(1, 2, 'u', 4)", item) == \
        {"base": 1, "height": 2, "unit": "u"}


@pytest.mark.parametrize("text", [
    "calculate_triangle_area(base=x)",          # not a literal
    "calculate_triangle_area(**kw)",            # unpacking
    "no call here",
    "calculate_triangle_area(10",               # unbalanced
    "calculate_triangle_area(base=__import__('os').system('true'))",  # never evaluated
])
def test_python_call_failures_yield_nothing(bfcl, text: str) -> None:
    task, items = bfcl
    assert task.free_answer(text, items[0]) is None


def test_python_call_step_directly() -> None:
    step = PythonCallStep(kind="python_call", params="p")
    fields = {"p": {"b": {}, "a": {}}}
    assert step.apply("f(1, 2)", fields) == {"b": 1, "a": 2}
    assert step.apply("f(1) + g(2)", fields) is None  # greedy span is not a single call


def test_json_extract_path() -> None:
    assert JsonExtract(path="a.b").apply({"a": {"b": 3}}) == 3
    assert JsonExtract().apply({"a": 1}) == {"a": 1}
    with pytest.raises(ValueError, match="JMESPath"):
        JsonExtract(path="a[")
