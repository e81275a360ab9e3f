"""tests/same.py finds a difference in any field of two scorings, arrays included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from tests.same import assert_same_scored, differences
from vbw.replay.stream import open_replay
from vbw.score.stream import score_stream
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task


@pytest.fixture(scope="module")
def scored():
    import io

    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    path = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    return lambda: score_stream(task, open_replay(Path(path)), arms, None, io.StringIO())


def test_the_same_replay_scores_the_same_and_a_changed_cell_or_field_is_named(scored) -> None:
    a, b = scored(), scored()
    assert_same_scored(a, b)
    valid = np.array(b.states.valid)
    valid[3, 1] = 1 - valid[3, 1]
    changed = b._replace(states=b.states.model_copy(update={"valid": valid}), n_task=1)
    assert differences(a, changed) == ["scored.states.valid: arrays differ",
                                       f"scored.n_task: {a.n_task} != 1"]
    with pytest.raises(AssertionError, match="the scorings differ"):
        assert_same_scored(a, b._replace(timings=b.timings[:-1]))
