"""The BFCL v4 tasks (bfcl_multiple, bfcl_parallel, bfcl_parallel_multiple) live on SmolLM2:
each engine compiles the `calls` schema of their first items or refuses it with a reason
(recorded as unsupported_schema), and two items of each go through the four standard arms
and score, on the shared model."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.conftest import TASK_CONF
from vbw.config import MaxTokens
from vbw.errors import UnsupportedSchema
from vbw.generate.items import generate_item
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

pytestmark = pytest.mark.live

TASKS = ["bfcl_multiple", "bfcl_parallel", "bfcl_parallel_multiple"]
CAPS = MaxTokens(free=48, json=64, package=64)  # few tokens: the shape, not the answer


@pytest.mark.parametrize("name", TASKS)
def test_every_engine_compiles_the_calls_schema_or_says_why(name: str, engines) -> None:
    task = load_task(TASK_CONF / f"{name}.yaml")
    for item in task.items(2):
        for engine in engines.values():
            try:
                engine.compile(item.schemas["calls"])
            except UnsupportedSchema as e:
                assert "cannot compile the schema" in str(e) or str(e), e


@pytest.mark.parametrize("name", TASKS)
def test_two_items_live_through_the_four_arms(name: str, backends) -> None:
    task = load_task(TASK_CONF / f"{name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    for item in task.items(2):
        rec = generate_item(task, item, arms, backends["llguidance"], CAPS)
        assert not rec.unsupported and list(rec.arms) == [a.key for a in arms]
        for arm in arms:
            text = rec.arms[arm.key].text
            assert text, arm.key
            answer = task.extract(text, item, arm.kind == "unconstrained").answer
            assert answer is None or isinstance(answer, list)  # calls, or nothing
            assert task.is_correct(answer, item) in (True, False)
            if arm.enforced and rec.arms[arm.key].finish_reason == "stop":
                obj = json.loads(text)
                jsonschema.validate(obj, item.schemas["calls"])
                assert all(len(call) == 1 for call in answer)
