"""The bundled ticket task: its 60 synthetic tickets are what the committed generator
writes, and both committed SmolLM2 replays were made from this very task (its generation
hash) on every item with every standard arm."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.conftest import REPLAYS, ROOT, TASK_CONF
from vbw.replay.io import read_replay
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

DATA = ROOT / "tasks" / "data" / "ticket"
CATEGORIES = {"billing", "refund", "shipping", "technical", "account"}


def test_task_loads_sixty_tickets_with_category_gold() -> None:
    task = load_task(TASK_CONF / "ticket.yaml")
    items = task.items()
    assert len(items) == 60
    assert [i.id for i in items] == [f"ticket_{k:03d}" for k in range(1, 61)]
    assert {i.gold for i in items} == CATEGORIES
    assert task.schema_names == ["ticket"]


def test_data_file_is_the_generators_output() -> None:
    """tickets.jsonl is not edited by hand: make_tickets.py rewrites it byte for byte."""
    spec = importlib.util.spec_from_file_location("make_tickets", DATA / "make_tickets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = [json.dumps(row, ensure_ascii=False) for row in module.tickets()]
    assert (DATA / "tickets.jsonl").read_text(encoding="utf-8") == "\n".join(lines) + "\n"
    rows = module.tickets()
    assert any(r["amount"] == 0 for r in rows) and any(isinstance(r["amount"], float)
                                                       for r in rows)
    assert {r["urgent"] for r in rows} == {True, False}


@pytest.mark.parametrize("engine", ["llamacpp", "outlines"])
def test_committed_replay_has_every_item_and_standard_arm(engine: str) -> None:
    task = load_task(TASK_CONF / "ticket.yaml")
    replay = read_replay(REPLAYS / "ticket" / "smollm2_135m" / f"{engine}.jsonl")
    arms = [a.key for a in task_arms(task.schema_names, "ticket", list(ARM_KINDS))]
    assert arms == ["unconstrained", "prompt_json[ticket]", "constrained[ticket]",
                    "reason_then_constrain[ticket]"]
    assert replay.header.task_hash == task.generation_hash()
    assert replay.header.engine == engine and replay.header.arms == arms
    assert replay.end is not None and not replay.torn_tail
    assert [r.id for r in replay.records] == [i.id for i in task.items()]
    assert all(sorted(r.arms) == sorted(arms) for r in replay.records)
