"""Per-arm intervention summaries: hand-made counts, and a replay with hand-made events
scored through the streamed and the in-memory paths."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from tests.conftest import REPLAYS, TASK_CONF
from tests.interventions_data import with_interventions
from vbw.replay import read_replay
from vbw.replay.stream import open_replay
from vbw.score.interventions import summarise
from vbw.score.metrics import build_report, compare
from vbw.score.pairs import comparison_pairs
from vbw.score.states import ItemStates
from vbw.score.stream import score_stream
from vbw.task.arms import parse_arm, task_arms, ARM_KINDS
from vbw.task.runner import load_task

ARMS = [parse_arm("prompt_json[a]"), parse_arm("constrained[a]"), parse_arm("unconstrained")]


def _states(events: np.ndarray, valid: list[list[int]], right: list[list[bool]]) -> ItemStates:
    n = len(valid)
    return ItemStates(ids=[f"i{k}" for k in range(n)], arms=ARMS,
                      valid=np.array(valid, np.int8), right=np.array(right, bool),
                      excluded=[], excluded_reasons={}, events=events)


def test_summary_by_outcome_and_flip_split() -> None:
    # columns: events, in_value, in_key, in_answer; -1: not recorded
    ev = np.full((6, 3, 4), -1, np.int32)
    ev[:, 1] = [[2, 1, 0, 1],   # right -> wrong, answer value changed
                [1, 0, 0, 0],   # right -> wrong, structure only
                [3, 1, 1, 0],   # right -> wrong, elsewhere
                [0, 0, 0, 0],   # right -> wrong, none
                [-1, -1, -1, -1],  # right -> wrong, not recorded
                [4, 4, 0, 4]]   # wrong -> right
    valid = [[1, 1, -1], [1, 1, -1], [1, 1, -1], [1, 0, -1], [1, 1, -1], [1, 1, -1]]
    right = [[True, False, True]] * 5 + [[False, True, True]]
    st = _states(ev, valid, right)
    comps = [compare(st, a, b, k, np.random.default_rng(0), 10)
             for a, b, k in comparison_pairs(ARMS)]
    out = summarise(st.events, st.arms, st.valid, st.right, comps)
    assert list(out) == ["constrained[a]"]  # enforced arms only
    s = out["constrained[a]"]
    assert s.recorded and s.not_recorded == 1
    assert (s.all.items, s.all.with_interventions, s.all.interventions) == (5, 4, 10)
    assert (s.all.in_value, s.all.in_answer, s.all.per_item) == (6, 5, 2.0)
    assert s.all.value_share == 0.6 and s.all.answer_share == 0.5
    assert s.by_outcome["right"].items == 1 and s.by_outcome["right"].in_answer == 4
    # items where the grammar changed the extracted answer: the first row and the last
    assert s.all.answer_items == 2 and s.by_outcome["right"].answer_items == 1
    assert s.by_outcome["wrong_but_valid"].answer_items == 1
    assert s.by_outcome["invalid"].answer_items == 0
    assert s.by_outcome["wrong_but_valid"].items == 3
    assert s.by_outcome["invalid"].items == 1 and s.by_outcome["invalid"].interventions == 0
    (f,) = s.flips
    assert (f.from_, f.to, f.right_to_wrong) == ("prompt_json[a]", "constrained[a]", 5)
    assert (f.answer_value, f.structure_only, f.elsewhere, f.none, f.not_recorded) == \
        (1, 1, 1, 1, 1)


def test_unknown_answer_path_and_nothing_recorded() -> None:
    ev = np.full((2, 3, 4), -1, np.int32)
    st = _states(ev, [[1, 1, -1]] * 2, [[True, True, True]] * 2)
    s = summarise(st.events, st.arms, st.valid, st.right, [])["constrained[a]"]
    assert not s.recorded and s.not_recorded == 2 and s.all is None
    ev[:, 1] = [[2, 1, 0, -1], [0, 0, 0, 0]]
    s = summarise(ev, st.arms, st.valid, st.right, [])["constrained[a]"]
    assert s.all.in_answer is None and s.all.answer_share is None and s.all.in_value == 1
    assert s.all.answer_items is None
    assert summarise(None, st.arms, st.valid, st.right, [])["constrained[a]"].recorded is False


def test_streamed_scoring_matches_the_events(tmp_path: Path) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    src = REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl"
    path = with_interventions(src, tmp_path / "r.jsonl", 30,
                              unrecorded=["reason_then_constrain[answer]"])
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    streamed = score_stream(task, open_replay(path), arms, 30, io.StringIO()).states
    replay = read_replay(path)
    col = [a.key for a in arms].index("constrained[answer]")
    # by the helper's rule, on texts that are exactly {"answer": N}
    plain = re.compile(r'\{"answer": -?\d+\}')
    checked = 0
    for i, rec in enumerate(replay.records):
        text = rec.arms["constrained[answer]"].text
        if text is None or not plain.fullmatch(text):
            continue
        want = [0, 0, 0, 0] if i % 5 == 4 else [2, 1, 0, 1] if i % 2 == 0 else [1, 0, 0, 0]
        assert streamed.events[streamed.ids.index(rec.id), col].tolist() == want, rec.id
        checked += 1
    assert checked >= 10
    free = [a.key for a in arms].index("unconstrained")
    rtc = [a.key for a in arms].index("reason_then_constrain[answer]")
    assert (streamed.events[:, free, 0] == -1).all() and (streamed.events[:, rtc, 0] == -1).all()
    report = build_report(streamed, task="gsm8k", label="x", mode="replay", meta={},
                          source="s", provenance="p", seed=1, resamples=10, n_task=30,
                          missing=[])
    assert report.interventions["constrained[answer]"].recorded
    assert not report.interventions["reason_then_constrain[answer]"].recorded
    assert set(report.interventions) == {a.key for a in arms if a.enforced}


def test_bfcl_answer_holds_its_forced_parameter_names() -> None:
    """BFCL's answer path is `@`: the whole object is the answer, so on a valid output
    every intervention in a value or a member name is in the answer, and a forced
    parameter name (a key) changed the answer. Scored from the committed SmolLM2
    outlines replay, whose enforced arms recorded interventions: on valid outputs
    in_answer is in_value plus the keys, and the items with a changed answer add up over
    the outcomes."""
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    path = REPLAYS / "bfcl_simple/smollm2_135m/outlines.jsonl"
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    st = score_stream(task, open_replay(path), arms, None, io.StringIO()).states
    report = build_report(st, task="bfcl_simple", label="x", mode="replay", meta={},
                          source="s", provenance="p", seed=1, resamples=10,
                          n_task=len(st.ids) + len(st.excluded), missing=[])
    enforced = [a.key for a in arms if a.enforced]
    assert enforced and set(report.interventions) == set(enforced)
    codes = st.codes()
    for key, iv in report.interventions.items():
        assert iv.recorded and iv.all is not None, key
        j = [a.key for a in arms].index(key)
        ev = st.events[:, j]
        valid = (codes[:, j] >= 4) & (ev[:, 3] >= 0)
        assert iv.all.in_answer > iv.all.in_value, (key, iv.all)  # the forced names
        assert int(ev[valid, 3].sum()) == int(ev[valid, 1].sum() + ev[valid, 2].sum()), key
        assert iv.all.answer_items == sum(o.answer_items for o in iv.by_outcome.values())
        assert iv.all.answer_items == int((ev[:, 3] > 0).sum()) <= iv.all.with_interventions
