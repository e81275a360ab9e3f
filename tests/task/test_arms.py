"""Arm keys, their contract order, and which arms have a contract or run under the grammar."""

from __future__ import annotations

import pytest

from vbw.errors import ConfigError
from vbw.task.arms import ALL_ARM_KINDS, ARM_KINDS, parse_arm, select_arms, task_arms


def test_contract_order_and_selection() -> None:
    keys = [a.key for a in task_arms(["answer", "reasoning"], "answer", list(ARM_KINDS))]
    assert keys == ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                    "prompt_json[reasoning]", "constrained[reasoning]",
                    "reason_then_constrain[answer]"]
    headline = task_arms(["answer"], "answer", ["prompt_json", "constrained"])
    assert [a.key for a in headline] == ["prompt_json[answer]", "constrained[answer]"]


def test_keys_round_trip_and_bad_keys_are_refused() -> None:
    for arm in task_arms(["answer", "reasoning"], "answer", list(ARM_KINDS)):
        assert parse_arm(arm.key) == arm
    for bad in ("constrained", "constrained[]", "free[answer]", "constrained[a][b]"):
        with pytest.raises(ValueError, match="not an arm key"):
            parse_arm(bad)


def test_contract_and_enforcement() -> None:
    arms = {a.kind: a for a in task_arms(["answer"], "answer", list(ARM_KINDS))}
    assert {k for k, a in arms.items() if a.has_contract} == {
        "prompt_json", "constrained", "reason_then_constrain"}
    assert {k for k, a in arms.items() if a.enforced} == {"constrained", "reason_then_constrain"}


def test_only_some_schemas() -> None:
    """arms.schemas keeps the arms of those labels; unconstrained has none and stays, and
    reason_then_constrain goes with the answer schema."""
    kinds = list(ARM_KINDS)
    keys = [a.key for a in task_arms(["answer", "reasoning"], "answer", kinds, ["reasoning"])]
    assert keys == ["unconstrained", "prompt_json[reasoning]", "constrained[reasoning]"]
    keys = [a.key for a in task_arms(["answer", "reasoning"], "answer", kinds, ["answer"])]
    assert keys == ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                    "reason_then_constrain[answer]"]
    assert task_arms(["a", "b"], "a", kinds, None) == task_arms(["a", "b"], "a", kinds)


def test_an_unknown_schema_label_lists_the_task_s() -> None:
    with pytest.raises(ConfigError) as e:
        select_arms("gsm8k", ["answer", "reasoning"], "answer", list(ARM_KINDS),
                    ["reasoning", "ticket"])
    assert str(e.value) == ("arms.schemas: 'ticket' is not a schema of task gsm8k (its "
                            "schemas: answer, reasoning)")


def test_tool_call_arms_follow_their_schema_s_json_arms() -> None:
    """tool_call[S] is selectable (ALL_ARM_KINDS), comes after constrained[S], has a
    contract, runs bound to the schema, and is the only kind sent as a tool."""
    keys = [a.key for a in task_arms(["answer", "reasoning"], "answer", list(ALL_ARM_KINDS))]
    assert keys == ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                    "tool_call[answer]", "prompt_json[reasoning]", "constrained[reasoning]",
                    "tool_call[reasoning]", "reason_then_constrain[answer]"]
    assert "tool_call" not in ARM_KINDS  # the standard four stay the standard four
    tool = parse_arm("tool_call[answer]")
    assert tool.has_contract and tool.enforced and tool.tool
    assert not any(a.tool for a in task_arms(["answer"], "answer", list(ARM_KINDS)))
