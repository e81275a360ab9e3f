"""Where an intervention landed: hand-made texts, each event's class and answer flag."""

from __future__ import annotations

import time

from vbw.score.landing import (KEY, STRUCTURE, VALUE, Landing, answer_steps, classify,
                               counts)


def at(text: str, token: str, nth: int = 0) -> tuple[int, int]:
    """(char, length) of the nth occurrence of `token` in `text`."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(token, pos + 1)
    return pos, len(token)


def test_answer_steps() -> None:
    assert answer_steps("@") == ()
    assert answer_steps("answer") == ("answer",)
    assert answer_steps("a.b[0].c") == ("a", "b", 0, "c")
    assert answer_steps('"x y"') == ("x y",)
    assert answer_steps("a[-1]") is None
    assert answer_steps("values(ground_truth[0])[0]") is None
    assert answer_steps("a[*].b") is None


def test_classes_in_a_gsm8k_like_object() -> None:
    text = '{"reasoning": "add 2 and 3", "answer": 5}'
    steps = answer_steps("answer")
    events = [at(text, "{"), at(text, "reasoning"), at(text, "add"), at(text, ", "),
              at(text, '"answer"'), at(text, "5"), at(text, ": 5"), at(text, '"', 2)]
    got = classify(text, events, steps)
    assert got == [Landing(STRUCTURE, False), Landing(KEY, False), Landing(VALUE, False),
                   Landing(STRUCTURE, False), Landing(KEY, False), Landing(VALUE, True),
                   Landing(VALUE, True), Landing(STRUCTURE, False)]
    assert counts(got) == (8, 3, 2, 2)


def test_whole_object_is_the_answer_for_at() -> None:
    text = '{"name": "f", "arguments": {"x": [1, 2.5e3, true]}}'
    got = classify(text, [at(text, "name"), at(text, '"f"'), at(text, "2.5e3"),
                          at(text, "true"), at(text, "["), at(text, "}")], ())
    assert got == [Landing(KEY, True), Landing(VALUE, True), Landing(VALUE, True),
                   Landing(VALUE, True), Landing(STRUCTURE, False),
                   Landing(STRUCTURE, False)]


def test_nested_path_and_index() -> None:
    text = '{"a": {"b": [10, {"c": "hit"}, 30], "c": "miss"}, "c": "no"}'
    steps = answer_steps("a.b[1].c")
    got = classify(text, [at(text, "hit"), at(text, "miss"), at(text, "no"),
                          at(text, "10"), at(text, "30")], steps)
    assert [g.answer for g in got] == [True, False, False, False, False]
    steps = answer_steps("a.b[2]")
    assert [g.answer for g in classify(text, [at(text, "30"), at(text, "10")], steps)] \
        == [True, False]
    # a container as the answer: its keys and values inside count, its punctuation not
    steps = answer_steps("a.b")
    got = classify(text, [at(text, "c", 0), at(text, "hit"), at(text, "miss"),
                          at(text, "[")], steps)
    assert [g.answer for g in got] == [True, True, False, False]


def test_escaped_member_name_matches_the_path() -> None:
    text = '{"an\\u0073wer": 9, "x": "a\\"b"}'
    got = classify(text, [at(text, "9"), at(text, 'a\\"b')], answer_steps("answer"))
    assert got == [Landing(VALUE, True), Landing(VALUE, False)]


def test_token_spanning_classes_takes_the_highest() -> None:
    text = '{"answer":"12"}'
    steps = answer_steps("answer")
    assert classify(text, [(text.index(':"1'), 3)], steps) == [Landing(VALUE, True)]
    assert classify(text, [(text.index('r"'), 2)], steps) == [Landing(KEY, False)]
    assert classify(text, [(text.index('":"'), 3)], steps) == [Landing(STRUCTURE, False)]


def test_end_of_generation_and_out_of_range() -> None:
    text = '{"answer": 1}'
    steps = answer_steps("answer")
    assert classify(text, [(len(text), 0), (len(text) + 5, 3)], steps) == \
        [Landing(STRUCTURE, False)] * 2


def test_text_outside_the_object_and_leading_junk() -> None:
    text = 'Sure: {"answer": 4} trailing 5'
    steps = answer_steps("answer")
    got = classify(text, [at(text, "Sure"), at(text, "4"), at(text, "5")], steps)
    assert got == [Landing(STRUCTURE, False), Landing(VALUE, True),
                   Landing(STRUCTURE, False)]


def test_cut_off_text_has_no_answer_value() -> None:
    text = '{"reasoning": "long and cut'
    got = classify(text, [at(text, "cut"), at(text, "reasoning")], answer_steps("answer"))
    assert got == [Landing(VALUE, False), Landing(KEY, False)]


def test_unknown_path_and_no_text() -> None:
    text = '{"answer": 4}'
    assert classify(text, [at(text, "4")], None) == [Landing(VALUE, None)]
    assert counts(classify(text, [at(text, "4")], None)) == (1, 1, 0, -1)
    assert classify(None, [(0, 1)], ()) == [Landing(STRUCTURE, False)]
    assert classify(text, [], ()) == []


def test_linear_on_hostile_texts() -> None:
    """Deep nesting, long strings and many events: well under a second each."""
    n = 30_000  # quadratic work would take minutes here
    for text in ("[" * n, '{"a":' * n, '{"answer": "' + "\\" * n + '"}', "{" + '"k":1,' * n,
                 '{"answer": [' + "1," * n + "1]}"):
        events = [(i, 3) for i in range(0, len(text), 7)]
        t0 = time.perf_counter()
        got = classify(text, events, answer_steps("answer"))
        assert len(got) == len(events)
        assert time.perf_counter() - t0 < 2.0, text[:20]
