"""What a job takes from its command line (vbw.cli.hydra_job): whether it selects arms,
so that a scored replay's header decides them only when it does not."""

from __future__ import annotations

import pytest

from vbw.cli.hydra_job import arms_given, first_given


@pytest.mark.parametrize("overrides", [["arms=tools"], ["arms.kinds=[constrained]"],
                                       ["n=5", "arms.schemas=[answer]"], ["+arms=headline"]])
def test_an_override_of_the_arms_group_kinds_or_schemas_selects_arms(overrides) -> None:
    assert arms_given(overrides)


@pytest.mark.parametrize("overrides", [[], ["task=gsm8k", "n=5", "replay=r.jsonl"],
                                       ["arms.max_tokens.free=10"], ["task.arms=x"]])
def test_other_overrides_and_token_caps_leave_the_arms_to_the_replay(overrides) -> None:
    assert not arms_given(overrides)


def test_only_the_tasks_first_selects_items_beside_n() -> None:
    assert first_given(["task=gsm8k", "task.dataset.first=null"])
    assert not first_given(["n=5", "task.dataset.path=x.jsonl"])
