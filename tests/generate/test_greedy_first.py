"""The greedy-first shortcut is exact: with it and without it, the same items decode to
byte-identical texts and record the same interventions, on both bundled tasks, for every
engine that has the shortcut (live), and on scripted models and rules (no model)."""

from __future__ import annotations

import pytest

from tests.conftest import TASK_CONF
from tests.generate.fakellama import EOG, ScriptedRule, script, scripted_model
from tests.generate.fakellama import runtime as fake_runtime
from vbw.config import MaxTokens
from vbw.generate.engines import ENGINES
from vbw.generate.items import generate_item
from vbw.generate.local import LocalBackend
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

CAPS = MaxTokens(free=96, json=96, package=96)


@pytest.mark.parametrize("seed", range(4))
def test_greedy_first_records_the_same_interventions_on_a_scripted_model(seed: int) -> None:
    wanted, allowed = script(seed)
    runs = {}
    for shortcut in (True, False):
        rt = fake_runtime(scripted_model(wanted, 3, seed))
        runs[shortcut] = rt.complete([1, 9, 4], max_tokens=100, rule=ScriptedRule(allowed),
                                     greedy_first=shortcut)
    on, off = runs[True], runs[False]
    assert on.text == off.text and on.n_tokens == off.n_tokens == len(allowed)
    assert [i.model_dump() for i in on.interventions] == \
        [i.model_dump() for i in off.interventions]
    # the records are the refused steps, and only those (the end of generation included)
    refused = [k for k in range(len(allowed)) if wanted[k] not in allowed[k]]
    assert [i.pos for i in on.interventions] == refused + [len(allowed)]
    assert on.interventions[-1].forced_id == EOG
    assert 0 < len(refused) < len(allowed)  # both kinds of step were decoded


@pytest.mark.live
@pytest.mark.parametrize("task_name,n", [("gsm8k", 1), ("bfcl_simple", 2)])
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_greedy_first_gives_identical_texts_and_records(runtime, engine: str,
                                                        task_name: str, n: int) -> None:
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    texts, records = {}, {}
    for shortcut in (True, False):
        backend = LocalBackend(runtime, ENGINES[engine](runtime, greedy_first=shortcut))
        recs = [generate_item(task, item, arms, backend, CAPS) for item in task.items(n)]
        texts[shortcut] = [{k: a.text for k, a in rec.arms.items()} for rec in recs]
        records[shortcut] = [{k: None if a.interventions is None else
                              [i.model_dump() for i in a.interventions]
                              for k, a in rec.arms.items()} for rec in recs]
    assert texts[True] == texts[False]
    assert any(t for rec in texts[True] for t in rec.values())  # something was generated
    assert records[True] == records[False]
