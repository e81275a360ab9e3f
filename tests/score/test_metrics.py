"""Rates over all items, quadrants, pairs, transitions and flips on a hand-made case."""

from __future__ import annotations

import numpy as np

from vbw.score.metrics import build_report
from vbw.score.pairs import comparison_pairs
from vbw.score.states import ItemStates
from vbw.task.arms import Arm, parse_arm

KEYS = ["unconstrained", "prompt_json[s]", "constrained[s]", "reason_then_constrain[s]"]
ARMS = [parse_arm(k) for k in KEYS]


def _states() -> ItemStates:
    # 4 items; columns follow ARMS
    valid = np.array([[-1, 1, 1, 1], [-1, 0, 1, 1], [-1, 1, 1, 1], [-1, 0, 1, 0]], np.int8)
    right = np.array([[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 1], [0, 0, 0, 0]], bool)
    return ItemStates(ids=list("abcd"), arms=ARMS, valid=valid, right=right,
                      excluded=["e"], excluded_reasons={"e": "too deep"})


def test_pairs_in_contract_order() -> None:
    keys = [(a.key, b.key, k) for a, b, k in comparison_pairs(ARMS)]
    assert keys == [
        ("prompt_json[s]", "constrained[s]", "headline"),
        ("unconstrained", "constrained[s]", "secondary"),
        ("unconstrained", "reason_then_constrain[s]", "secondary")]
    assert comparison_pairs([Arm("prompt_json", "s"), Arm("constrained", "s")]) == [
        (Arm("prompt_json", "s"), Arm("constrained", "s"), "headline")]


def test_tool_call_arms_are_compared_to_both_json_arms_of_their_schema() -> None:
    arms = [parse_arm(k) for k in ("unconstrained", "prompt_json[s]", "constrained[s]",
                                   "tool_call[s]")]
    keys = [(a.key, b.key, k) for a, b, k in comparison_pairs(arms)]
    assert keys == [
        ("prompt_json[s]", "constrained[s]", "headline"),
        ("constrained[s]", "tool_call[s]", "headline"),
        ("prompt_json[s]", "tool_call[s]", "headline"),
        ("unconstrained", "constrained[s]", "secondary"),
        ("unconstrained", "tool_call[s]", "secondary")]
    valid = np.array([[-1, 1, 1, 1], [-1, 0, 1, 0]], np.int8)
    right = np.array([[1, 1, 1, 0], [0, 0, 1, 0]], bool)
    st = ItemStates(ids=["a", "b"], arms=arms, valid=valid, right=right, excluded=[],
                    excluded_reasons={})
    r = build_report(st, task="t", label="acc", mode="replay", meta={}, source="x",
                     provenance="p", seed=42, resamples=100, n_task=2, missing=[])
    tool = {c.from_: c for c in r.comparisons if c.to == "tool_call[s]" and c.kind == "headline"}
    assert "response_format -> forced tool call" in tool["constrained[s]"].role
    assert "prompt -> forced tool call" in tool["prompt_json[s]"].role
    assert tool["constrained[s]"].flips.right_to_wrong == 2
    assert r.arms["tool_call[s]"].schema_validity.rate == 0.5


def test_report_numbers() -> None:
    r = build_report(_states(), task="t", label="acc", mode="replay", meta={}, source="x",
                     provenance="p", seed=42, resamples=500, n_task=5, missing=[])
    assert r.n == 4 and r.excluded.ids == ["e"] and r.excluded.reasons == {"e": "too deep"}
    u = r.arms["unconstrained"]
    assert u.schema_validity is None and u.quadrant is None and u.answer_accuracy.rate == 0.5
    c = r.arms["constrained[s]"]
    assert c.schema_validity.rate == 1.0 and c.wrong_but_valid.rate == 0.5
    assert c.quadrant.model_dump() == {"valid_right": 2, "valid_wrong": 2, "invalid_right": 0,
                                       "invalid_wrong": 0}
    head = r.comparisons[0]
    assert head.kind == "headline" and list(head.deltas) == ["schema_validity",
                                                             "answer_accuracy", "wrong_but_valid"]
    assert head.deltas["schema_validity"].delta == 0.5
    assert head.transitions == {"valid/right -> valid/right": 1,
                                "invalid/wrong -> valid/right": 1,
                                "valid/right -> valid/wrong": 1,
                                "invalid/wrong -> valid/wrong": 1}
    assert head.flips.right_to_wrong == 1 and head.flips.wrong_to_right == 1
    sec = r.comparisons[1]
    assert list(sec.deltas) == ["answer_accuracy"]
    assert sec.transitions["n/a/right -> valid/right"] == 1
    assert [row["id"] for row in r.ledger] == list("abcd")
    assert r.ledger[1]["prompt_json[s]"] == "invalid/wrong"


def test_same_seed_same_intervals() -> None:
    a = build_report(_states(), task="t", label="acc", mode="replay", meta={}, source="x",
                     provenance="p", seed=7, resamples=500, n_task=5, missing=[])
    b = build_report(_states(), task="t", label="acc", mode="replay", meta={}, source="x",
                     provenance="p", seed=7, resamples=500, n_task=5, missing=[])
    assert a.model_dump() == b.model_dump()


def test_comparisons_carry_the_exact_test_and_mde() -> None:
    """Hand-checked on _states(): prompt_json[s] -> constrained[s] validity goes 1,0,1,0 ->
    1,1,1,1 (0 vs 2 discordant: p = 2 * 1/2^2), accuracy 1,0,1,0 -> 1,1,0,0 (1 vs 1)."""
    r = build_report(_states(), task="t", label="acc", mode="replay", meta={}, source="x",
                     provenance="p", seed=42, resamples=500, n_task=5, missing=[])
    head = r.comparisons[0].deltas
    v, a = head["schema_validity"], head["answer_accuracy"]
    assert (v.n10, v.n01, v.mcnemar_p) == (0, 2, 2 / 2 ** 2)
    assert (a.n10, a.n01, a.mcnemar_p) == (1, 1, 1.0)
    assert v.mde is None and a.mde is None  # 2 discordant items can never reach p < 0.05
