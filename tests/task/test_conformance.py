"""vbw.task.conformance: the vendored Draft 2020-12 suite as jsonschema reads it, a task's
schemas with every item's gold-shaped answer, and the texts an arm asks for."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from tests.conftest import TASK_CONF
from vbw.task.conformance import SUITES, ordered, suite_cases, task_cases, texts
from vbw.task.runner import load_task


def load_task_by_name(name: str):
    return load_task(TASK_CONF / f"{name}.yaml")


def test_the_suite_is_every_required_draft2020_12_test():
    cases = suite_cases()
    assert len(cases) == 368 and sum(len(c.instances) for c in cases) == 1257
    assert len({c.category for c in cases}) == len(list(SUITES["draft2020-12"].glob("*.json")))
    assert (SUITES["draft2020-12"].parent / "LICENSE").read_text().startswith("Copyright")


def test_jsonschema_agrees_with_the_suites_verdicts():
    """The verdicts are the suite's; jsonschema (scoring's validator) gives the same on
    every test that needs no remote schema."""
    for case in suite_cases():
        if case.category in ("refRemote", "vocabulary") or "$ref" in json.dumps(case.schema) \
                and "http" in json.dumps(case.schema):
            continue
        v = Draft202012Validator(case.schema)
        for inst in case.instances:
            assert v.is_valid(inst.value) == inst.valid, (case.id, inst.label)


def test_texts_follow_the_schemas_property_order():
    schema = {"properties": {"b": {"properties": {"y": {}, "x": {}}}, "a": {}}}
    value = {"a": 1, "z": 0, "b": {"x": 1, "y": [1, 2]}}
    assert list(ordered(value, schema)) == ["b", "a", "z"]
    assert texts(value, schema) == {"compact": '{"b":{"y":[1,2],"x":1},"a":1,"z":0}',
                                    "spaced": '{"b": {"y": [1, 2], "x": 1}, "a": 1, "z": 0}'}
    assert texts(7, {}) == {"compact": "7"}  # one text when both are the same


def test_a_tasks_cases_hold_each_items_gold_shaped_answer():
    task = load_task_by_name("bfcl_simple")
    items = task.items(5)
    cases = task_cases(task, items)
    assert len(cases) == 5  # one schema per item
    for case, item in zip(cases, items):
        golds = [i for i in case.instances if i.keyword == "gold"]
        assert [g.items for g in golds] == [(item.id,)]
        v = Draft202012Validator(case.schema)
        assert v.is_valid(golds[0].value) and task.is_correct(
            task.json_answer(golds[0].value), item)
        broken = [i for i in case.instances if not i.valid]
        assert broken and all(not v.is_valid(i.value) for i in broken)


def test_items_with_one_schema_share_a_case_and_equal_golds_share_an_instance():
    task = load_task_by_name("gsm8k")
    items = task.items(40)
    cases = task_cases(task, items)
    assert sorted(c.category for c in cases) == sorted(task.schema_names)
    answer = next(c for c in cases if c.category == "answer")
    golds = [i for i in answer.instances if i.keyword == "gold"]
    assert sum(len(g.items) for g in golds) == 40
    assert len(golds) == len({json.dumps(i.value) for i in golds})
