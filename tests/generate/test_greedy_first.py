"""The greedy-first shortcut is exact: with it and without it, the same items decode to
byte-identical texts, on both bundled tasks, for every engine that has the shortcut."""

from __future__ import annotations

import pytest

from tests.conftest import TASK_CONF
from vbw.config import MaxTokens
from vbw.generate.engines import ENGINES
from vbw.generate.items import generate_item
from vbw.generate.local import LocalBackend
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

pytestmark = pytest.mark.live

CAPS = MaxTokens(free=96, json=96, package=96)


@pytest.mark.parametrize("task_name,n", [("gsm8k", 1), ("bfcl_simple", 2)])
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_greedy_first_gives_byte_identical_texts(runtime, engine: str, task_name: str,
                                                 n: int) -> None:
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    texts = {}
    for shortcut in (True, False):
        backend = LocalBackend(runtime, ENGINES[engine](runtime, greedy_first=shortcut))
        texts[shortcut] = [{k: a.text for k, a in generate_item(task, item, arms, backend,
                                                                CAPS).arms.items()}
                           for item in task.items(n)]
    assert texts[True] == texts[False]
    assert any(t for rec in texts[True] for t in rec.values())  # something was generated
