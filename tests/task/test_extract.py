"""Each free-text step, the GSM8K chain in the spec's order, first-JSON-object rules, and
the bound on what a task-written regex reads (max_chars; RE2 itself: test_regex.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import TASK_CONF
from vbw.errors import DataError
from vbw.task.check import RegexChecker
from vbw.task.extract import (MAX_CALL_CHARS, BoxedStep, JsonExtract, LastNumberStep,
                              PythonCallsStep, PythonCallStep, RegexStep,
                              first_json_object)
from vbw.task.jsontext.scan import first_json_span
from vbw.task.runner import load_task


@pytest.fixture(scope="module")
def bfcl():
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    return task, task.items(3)


def test_regex_first_and_last_match() -> None:
    text = "a=1 then a=2"
    assert RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match="first").apply(text, {}) == "1"
    assert RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match="last").apply(text, {}) == "2"
    assert RegexStep(kind="regex", pattern=r"zzz").apply(text, {}) is None
    with pytest.raises(ValueError, match="group 3 does not exist"):  # not a silent miss
        RegexStep(kind="regex", pattern=r"a=(\d)", group=3)


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
    assert task.extract(text, item, free=True).answer == expected


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
    # integers beyond 64 bits stay exact ints (orjson would make them floats), as do
    # those within; a float literal that large stays a float
    big = 2 ** 64 * 10 + 7
    for text in (f'{{"a": {big}}}', f'{{"a": [-{big}]}}', f'{{"a": {{"b": {big}}}}}'):
        assert first_json_object(text) == json.loads(text)
        assert repr(first_json_object(text)) == repr(json.loads(text))
    assert first_json_object('{"a": 9223372036854775807, "b": 1e19}') == \
        {"a": 2 ** 63 - 1, "b": 1e19}


def test_python_call_positional_and_keywords(bfcl) -> None:
    task, items = bfcl
    item = items[0]  # calculate_triangle_area(base, height, unit)
    def free(text: str) -> object:
        return task.extract(text, item, free=True).answer

    assert free("calculate_triangle_area(10, 5)") == {"base": 10, "height": 5}
    assert free("x = calculate_triangle_area(10,\n height=5, unit='cm')") == \
        {"base": 10, "height": 5, "unit": "cm"}
    # extra positionals are dropped
    assert free("calculate_triangle_area(1, 2, 'u', 4)") == {"base": 1, "height": 2, "unit": "u"}


@pytest.mark.parametrize("text", [
    "calculate_triangle_area(base=x)",          # not a literal
    "calculate_triangle_area(**kw)",            # unpacking
    "no call here",
    "calculate_triangle_area(10",               # unbalanced
    "calculate_triangle_area(base=__import__('os').system('true'))",  # never evaluated
])
def test_python_call_failures_yield_nothing(bfcl, text: str) -> None:
    task, items = bfcl
    assert task.extract(text, items[0], free=True).answer is None


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


def test_python_call_longer_than_the_bound_is_not_parsed() -> None:
    step = PythonCallStep(kind="python_call", params="p")
    fields = {"p": {"s": {}}}
    pad = MAX_CALL_CHARS - len("f('')")
    assert step.apply(f"f('{'x' * pad}')", fields) == {"s": "x" * pad}
    assert step.apply(f"f('{'x' * (pad + 1)}')", fields) is None


def test_first_json_object_depth_and_strings() -> None:
    assert first_json_object('{"a": "{\\"b\\": 1}"} tail') == {"a": '{"b": 1}'}
    assert first_json_object('{"a": "{}" junk') == {}          # the `{}` inside the string
    assert first_json_object('{"a": [1, {"b": 2}, x]}') == {"b": 2}


# -- regex steps: a bounded read, and a load-time screen ------------------------------------
def test_regex_reads_only_max_chars_of_head_or_tail() -> None:
    text = "a=1 " + "x" * 200 + " a=2"
    last = RegexStep(kind="regex", pattern=r"a=(\d)", group=1, max_chars=100)
    first = RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match="first", max_chars=100)
    assert last.apply(text, {}) == "2" and first.apply(text, {}) == "1"
    assert last.apply(text[:-4], {}) is None                      # the match is in the head
    assert last.model_copy(update={"max_chars": None}).apply(text[:-4], {}) == "1"
    cut = RegexStep(kind="regex", pattern="^a", max_chars=2)
    assert cut.apply("bbbbab", {}) == "a"  # "^" matches where the text was cut



def test_regex_span_is_where_apply_read_its_candidate() -> None:
    """The HTML report marks this span; it must hold exactly apply()'s candidate, also when
    only the head or tail of the text was read."""
    text = "a=1 " + "x" * 200 + " a=2"
    for match in ("first", "last"):
        for max_chars in (None, 100):
            step = RegexStep(kind="regex", pattern=r"a=(\d)", group=1, match=match,
                             max_chars=max_chars)
            start, end = step.span(text)  # type: ignore[misc]
            assert text[start:end] == step.apply(text, {})
    assert RegexStep(kind="regex", pattern=r"a=(\d)|(b)", group=2).span("a=1") is None
    boxed = r"\boxed{3} then \boxed{x}"
    start, end = BoxedStep(kind="boxed").span(boxed)  # type: ignore[misc]
    assert boxed[start:end] == "x"


def test_first_json_span_holds_the_first_json_object() -> None:
    for text in ('x {"a": 1} {"b": 2}', '{bad {"a": {"b": 1}}', '[{"a": 1}]', '😀{"a": "}"}'):
        start, end = first_json_span(text)  # type: ignore[misc]
        assert json.loads(text[start:end]) == first_json_object(text)
    assert first_json_span('{"a": 1') is None and first_json_span("[1]") is None


def test_regex_checker_bounds_the_answer_and_refuses_gold_patterns(tmp_path: Path) -> None:
    check = RegexChecker(kind="regex", max_chars=5)
    assert check.check("abcde", "a.*") and not check.check("abcdef", "a.*")
    assert check.gold_problem("a.*") is None and "lookahead" in check.gold_problem("(?=x)y")
    (tmp_path / "d.jsonl").write_text(json.dumps({"q": "?", "a": "(x)\\1"}) + "\n")
    task = {"name": "t", "dataset": {"path": "d.jsonl", "id": {"kind": "row_index"},
                                     "fields": {"q": "q"}, "gold": {"path": "a"}},
            "prompts": {"free": "{{ q }}", "json": "{{ q }}"},
            "schemas": {"s": {"kind": "static", "schema": {"type": "object"}}},
            "answer_schema": "s", "extract": {"free": [{"kind": "last_number"}]},
            "check": {"kind": "regex"}}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(task))
    with pytest.raises(DataError, match=r"t.yaml: task t, item \S+: check regex uses the gold "
                                         r"as its pattern: gold '\(x\)\\\\1'.*backreference"):
        load_task(tmp_path / "t.yaml").items()


FUNCTIONS = {"fns": [{"name": "f", "parameters": {"properties": {"a": {}, "b": {}}}},
                     {"name": "m.g", "parameters": {"properties": {"s": {}}}}]}
CALLS = PythonCallsStep(kind="python_calls", functions="fns")


@pytest.mark.parametrize("text", [
    "[f(1, b=2), m.g('x')]",
    "```python\nf(1, b=2)\nm.g('x')\n```",
    "Calls: f(1, b=2), m.g(s='x') and that is all",
    "f(\n  1,\n  b=2)\nm.g(s='x')"])
def test_python_calls_reads_lists_and_lines(text: str) -> None:
    assert CALLS.apply(text, FUNCTIONS) == [{"f": {"a": 1, "b": 2}}, {"m.g": {"s": "x"}}]


def test_python_calls_positionals_of_an_unknown_function_are_dropped() -> None:
    assert CALLS.apply("[h(1, c=[2.5])]", FUNCTIONS) == [{"h": {"c": [2.5]}}]


@pytest.mark.parametrize("text", ["no call here", "[f(a=x)]", "[f(1), 3, f(2)]", "[f(**k)]",
                                  "[(f)(1)()]", "f(" + "1," * MAX_CALL_CHARS + ")"])
def test_python_calls_gives_no_answer_for_anything_else(text: str) -> None:
    assert CALLS.apply(text, FUNCTIONS) is None
