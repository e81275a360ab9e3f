"""Interventions as report.html marks: positions in the embedded text's UTF-16 units,
clipped overlaps, cut texts, the cap, and the counts over every intervention."""

from __future__ import annotations

from vbw.report import marks
from vbw.report.marks import MAX_MARKS, MAX_TOKEN_CHARS, ArmMarks
from vbw.score.landing import Step, answer_steps
from vbw.score.shown import Event, ShownArm, clip, marked


def ev(char: int, forced: str, lp_w: float = -0.1, lp_f: float = -2.0,
       wanted: str = "<x>") -> Event:
    return Event(char=char, wanted=wanted, forced=forced, lp_wanted=lp_w, lp_forced=lp_f)


def arm_marks(text: str, events: list[Event], steps: tuple[Step, ...] | None,
              limit: int) -> ArmMarks:
    """The marks of `text` as the scoring pass keeps it (vbw.score.shown)."""
    kept = ShownArm(clip(text, limit), len(text), None, None, None, None,
                    marked(text, events, steps, MAX_MARKS))
    return marks.arm_marks(kept, limit)


def test_positions_probabilities_and_classes() -> None:
    text = '{"answer": 42}'
    m = arm_marks(text, [ev(0, "{"), ev(11, "4", -0.5, -0.7), ev(len(text), "")],
                  answer_steps("answer"), 20_000)
    assert [(x.at, x.n, x.where, x.answer) for x in m.marks] == \
        [(0, 1, "structure", False), (11, 1, "value", True), (14, 0, "structure", False)]
    assert m.marks[1].pw == "0.607" and m.marks[1].pf == "0.497"
    assert abs(m.marks[1].margin - 0.2) < 1e-12
    assert (m.iv, m.iv_answer) == (3, 1) and abs(m.iv_max - 1.9) < 1e-12


def test_astral_characters_count_twice_in_utf16() -> None:
    text = '{"a": "😀😀x"}'
    (m,) = arm_marks(text, [ev(text.index("x"), "x")], answer_steps("a"), 20_000).marks
    assert m.at == text.index("x") + 2 and m.n == 1


def test_overlaps_are_clipped_and_order_restored() -> None:
    text = '{"answer": 12345}'
    m = arm_marks(text, [ev(13, "345"), ev(11, "1234")], (), 20_000)
    assert [(x.at, x.n) for x in m.marks] == [(11, 4), (15, 1)]


def test_marks_in_the_omitted_part_are_left_out() -> None:
    text = '{"answer": "' + "a" * 100 + '"}'
    events = [ev(0, "{"), ev(50, "aa"), ev(len(text) - 3, "a")]
    m = arm_marks(text, events, (), 40)
    # kept: the first 20 and the last 20 characters; 74 left out between them
    assert [(x.at, x.n) for x in m.marks] == [(0, 1), (len(text) - 3 - (len(text) - 40), 1)]
    assert m.iv == 3


def test_the_strongest_are_kept_and_tokens_cut() -> None:
    text = "{" + " " * (MAX_MARKS + 10) + "}"
    events = [ev(i, " ", lp_f=-float(i)) for i in range(1, MAX_MARKS + 11)]
    m = arm_marks(text, events, (), 20_000)
    assert len(m.marks) == MAX_MARKS and m.marks[0].at == 11  # the 10 weakest dropped
    (long,) = arm_marks("{}", [ev(0, "{", wanted="w" * 5000)], (), 20_000).marks
    assert len(long.wanted) == MAX_TOKEN_CHARS + 1
