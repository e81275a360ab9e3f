"""Pairing replays on item ids, per-arm paired statistics, identity of texts and the
fail_if_worse direction, on hand-made item states whose answers are known."""

from __future__ import annotations

import numpy as np

from vbw.score.compare import ReplaySide, build_comparison, worse
from vbw.score.digest import text_digest
from vbw.score.paired import mcnemar_p
from vbw.score.states import ItemStates
from vbw.score.stream import Scored
from vbw.task.findings import Audit
from vbw.task.arms import parse_arm

ARMS = [parse_arm("unconstrained"), parse_arm("constrained[s]")]


def _scored(label: str, right: list[tuple[bool, bool]], valid: list[int], *,
            ids: list[str], texts: list[str], excluded: dict[str, str] | None = None,
            missing: list[str] | None = None) -> tuple[ReplaySide, Scored]:
    states = ItemStates(ids=ids, arms=ARMS,
                        valid=np.array([[-1, v] for v in valid], np.int8).reshape(len(ids), 2),
                        right=np.array(right, bool).reshape(len(ids), 2),
                        excluded=list(excluded or {}), excluded_reasons=excluded or {})
    side = ReplaySide(label=label, path=f"{label}.jsonl", sha256=label * 8, task_hash=None,
                      provenance="p", excluded=excluded or {}, missing=missing or [])
    digests = np.array([[text_digest("free"), text_digest(t)] for t in texts], dtype="S16")
    audit = Audit(task="t", items=0, schemas=0, gold_checked=0)
    return side, Scored(audit, states, missing or [], len(ids), [], None, digests)


def _pair() -> tuple[tuple[ReplaySide, Scored], tuple[ReplaySide, Scored], list[str]]:
    """14 task items. A scores 13 (x13 excluded), B 13 (x12 missing): 12 are paired.
    On constrained[s] accuracy A is right on x0..x9 and B on x10, x11: 10 vs 2."""
    ids = [f"x{i}" for i in range(14)]
    a_ids = [i for i in ids if i != "x13"]
    b_ids = [i for i in ids if i != "x12"]
    a_right = [(True, k < 10) for k in range(13)]
    b_right = [(True, k in (10, 11)) for k in range(13)]
    a = _scored("A", a_right, [1] * 13, ids=a_ids, texts=[f"t{k}" for k in range(13)],
                excluded={"x13": "too deep"})
    b_texts = [f"t{k}" if k in (10, 11) else f"u{k}" for k in range(13)]
    b = _scored("B", b_right, [1] * 11 + [0, 1], ids=b_ids, texts=b_texts, missing=["x12"])
    return a, b, ids


def _report(*replays: tuple[ReplaySide, Scored], ids: list[str]):
    return build_comparison([r[0] for r in replays], [r[1] for r in replays], ARMS,
                            task="t", label="acc", selected=ids, task_hash="h",
                            task_check="c", arms_left_out={}, seed=42, resamples=500)


def test_pairs_only_items_scored_in_every_replay() -> None:
    a, b, ids = _pair()
    r = _report(a, b, ids=ids)
    assert r.n == 12 and r.n_task == 14
    assert r.left_out.ids == ["x12", "x13"]
    assert r.left_out.reasons == {"x12": {"B": "missing"}, "x13": {"A": "excluded: too deep"}}


def test_ten_vs_two_paired_numbers() -> None:
    a, b, ids = _pair()
    c = _report(a, b, ids=ids).comparisons[0]
    assert (c.from_, c.to) == ("A", "B")
    acc = c.arms["constrained[s]"].metrics["answer_accuracy"]
    assert (acc.rate_from, acc.rate_to) == (10 / 12, 2 / 12)
    assert (acc.delta.n10, acc.delta.n01) == (10, 2)
    assert acc.delta.delta == 2 / 12 - 10 / 12
    assert acc.delta.mcnemar_p == mcnemar_p(10, 2) < 0.05
    valid = c.arms["constrained[s]"].metrics["schema_validity"]
    assert (valid.delta.n10, valid.delta.n01) == (1, 0)  # x11: valid in A only
    free = c.arms["unconstrained"]
    assert list(free.metrics) == ["answer_accuracy"] and free.identical == 12
    assert free.metrics["answer_accuracy"].delta.mcnemar_p == 1.0
    assert free.metrics["answer_accuracy"].delta.mde is None
    assert c.arms["constrained[s]"].identical == 2  # x10, x11 have the same text


def test_gate_direction_per_metric() -> None:
    a, b, ids = _pair()
    r = _report(a, b, ids=ids)
    back = _report(b, a, ids=ids)  # the same pair the other way round
    acc = [("constrained[s]", "answer_accuracy")]
    assert len(worse(r, acc)) == 1 and worse(back, acc) == []  # accuracy: down is worse
    wbv = r.comparisons[0].arms["constrained[s]"].metrics["wrong_but_valid"].delta
    assert (wbv.n10, wbv.n01) == (2, 10) and wbv.delta > 0  # x0..x9 wrong but valid in B
    gate = [("constrained[s]", "wrong_but_valid")]
    assert len(worse(r, gate)) == 1 and worse(back, gate) == []  # wrong-but-valid: up is worse


def test_a_third_replay_leaves_the_first_comparison_alone() -> None:
    """Each (arm, pair) has its own stream keyed by the files' sha256, and pairing is over
    all replays: with a third replay holding every item the first comparison is equal."""
    a, b, ids = _pair()
    third = _scored("C", [(True, True)] * 14, [1] * 14, ids=ids, texts=["z"] * 14)
    two, three = _report(a, b, ids=ids), _report(a, b, third, ids=ids)
    assert three.comparisons[0] == two.comparisons[0]
    assert [(c.from_, c.to) for c in three.comparisons] == [("A", "B"), ("A", "C")]


def test_the_gate_follows_the_verdict_not_the_ci() -> None:
    """Five items right in A and wrong in B: the bootstrap CI is clear of 0, but McNemar
    p=0.0625, so it is no effect and the gate does not trip: Delta.effect is the one
    verdict the reports and the gate read."""
    ids = [f"x{i}" for i in range(12)]
    a = _scored("A", [(True, k < 5) for k in range(12)], [1] * 12, ids=ids,
                texts=[f"t{k}" for k in range(12)])
    b = _scored("B", [(True, False)] * 12, [1] * 12, ids=ids, texts=[f"u{k}" for k in range(12)])
    d = _report(a, b, ids=ids).comparisons[0].arms["constrained[s]"].metrics["answer_accuracy"].delta
    assert (d.n10, d.n01, d.mcnemar_p) == (5, 0, 0.0625)
    assert d.excludes_0 and d.ci95[1] < 0 and d.effect is False
    assert worse(_report(a, b, ids=ids), [("constrained[s]", "answer_accuracy")]) == []
