"""vbw.score.states: arm_states, scoring's inner loop, inlines Task.answer and
Task.is_correct (and the arm's validity); on every committed replay, item by item and arm
by arm, it gives what they give."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.replay import read_replay
from vbw.score.states import arm_states
from vbw.task.arms import parse_arm
from vbw.task.runner import load_task
from vbw.task.validity import Validators

BUNDLED = sorted(p.relative_to(REPLAYS) for p in REPLAYS.glob("*/*/*.jsonl"))


@pytest.mark.parametrize("rel", BUNDLED, ids=[p.as_posix() for p in BUNDLED])
def test_arm_states_is_task_answer_validity_and_is_correct(rel: Path) -> None:
    task = load_task(TASK_CONF / f"{rel.parts[0]}.yaml")
    replay = read_replay(REPLAYS / rel)
    keys = replay.header.arms or list(replay.records[0].arms)  # (a 0.1 header lists none)
    arms = [parse_arm(k) for k in keys]
    position = {item_id: i for i, item_id in enumerate(task.ids(None))}
    validators, checked = Validators(), 0
    for rec in replay.records:
        if rec.unsupported or rec.id not in position:
            continue
        item = task.item(position[rec.id], rec.id)
        texts = {k: a.text for k, a in rec.arms.items()}
        vrow, rrow = arm_states(task, item, texts, arms, Validators())
        for arm, valid, right in zip(arms, vrow, rrow):
            obj, answer = task.answer(texts[arm.key], item, arm)
            want = -1 if not arm.has_contract else int(
                obj is not None and validators.is_valid(item.schemas[arm.schema], obj))
            assert (valid, bool(right)) == (want, bool(task.is_correct(answer, item))), \
                (rec.id, arm.key)
            checked += 1
    assert checked >= 100
