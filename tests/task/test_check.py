"""Checkers, including every rule of the simplified BFCL AST match in the spec."""

from __future__ import annotations

from vbw.task.check import (CallArgsChecker, MembershipChecker, NumericChecker, RegexChecker,
                            StringChecker)

SCHEMA = {"properties": {"base": {}, "height": {}, "unit": {}, "flag": {}, "xs": {},
                         "opts": {}}}
call = CallArgsChecker(kind="call_args")


def test_numeric() -> None:
    n = NumericChecker(kind="numeric")
    assert n.check(18, 18.0) and n.check(18.0000001, 18)
    assert not n.check(18.01, 18) and not n.check(True, 1) and not n.check("18", 18)


def test_string_normalisations() -> None:
    s = StringChecker(kind="string", normalize=["strip", "lower", "collapse_whitespace"],
                      delete_chars=".")
    assert s.check("  New   York. ", "new york")
    assert not StringChecker(kind="string").check("A", "a")
    assert not s.check(1, "1")


def test_regex_and_membership() -> None:
    assert RegexChecker(kind="regex").check("abc", "a.c")
    assert not RegexChecker(kind="regex").check("abcd", "a.c")
    assert RegexChecker(kind="regex", fullmatch=False).check("xxabcx", "a.c")
    assert RegexChecker(kind="regex", pattern=r"\d+").check("42", None)
    m = MembershipChecker(kind="membership", string=StringChecker(kind="string",
                                                                  normalize=["lower"]))
    assert m.check("Paris", ["paris", "lyon"]) and not m.check("Rome", ["paris"])
    assert MembershipChecker(kind="membership").check(3, [1, 3])
    assert not MembershipChecker(kind="membership").check(True, [1])


def test_call_args_basic_and_optional() -> None:
    gold = {"base": [10], "height": [5], "unit": ["units", ""]}
    assert call.check({"base": 10, "height": 5}, gold, SCHEMA)            # optional absent
    assert call.check({"base": 10.0, "height": 5, "unit": "Units"}, gold, SCHEMA)
    assert not call.check({"base": 10}, gold, SCHEMA)                     # required absent
    assert not call.check({"base": 10, "height": 5, "unit": ""}, gold, SCHEMA)  # "" never matches
    assert not call.check({"base": 10, "height": 5, "color": "red"}, gold, SCHEMA)  # key outside schema
    assert not call.check([10, 5], gold, SCHEMA)
    assert not call.check(None, gold, SCHEMA)


def test_call_args_string_normalisation() -> None:
    gold = {"unit": ["square-meters"]}
    assert call.check({"unit": "Square Meters"}, gold, SCHEMA)
    assert call.check({"unit": "square_meters."}, gold, SCHEMA)
    assert not call.check({"unit": "sq m"}, gold, SCHEMA)


def test_call_args_booleans_and_numbers() -> None:
    assert call.check({"flag": True}, {"flag": [True]}, SCHEMA)
    assert not call.check({"flag": 1}, {"flag": [True]}, SCHEMA)
    assert not call.check({"base": True}, {"base": [1]}, SCHEMA)
    assert not call.check({"base": "10"}, {"base": [10]}, SCHEMA)


def test_call_args_lists_and_objects() -> None:
    assert call.check({"xs": ["A", 2]}, {"xs": [["a", 2.0]]}, SCHEMA)
    assert not call.check({"xs": ["a"]}, {"xs": [["a", 2]]}, SCHEMA)
    gold = {"opts": [{"mode": ["fast", ""], "n": [3]}]}
    assert call.check({"opts": {"n": 3}}, gold, SCHEMA)
    assert call.check({"opts": {"n": 3, "mode": "FAST"}}, gold, SCHEMA)
    assert not call.check({"opts": {"n": 3, "extra": 1}}, gold, SCHEMA)
    assert not call.check({"opts": {"mode": "fast"}}, gold, SCHEMA)


def test_call_args_plain_equality_fallback() -> None:
    assert call.check({"base": None}, {"base": [None]}, SCHEMA)


GOLDS = {"numeric": 18.0, "exact": {"urgent": True}, "string": "Paris", "regex": r"[A-Z]{2}\d+",
         "membership": ["b", "c"], "call_args": {"base": [10], "unit": ["cm", ""],
                                                 "opts": [{"k": ["v"]}]}}


def test_every_kind_builds_answers_it_calls_right() -> None:
    """mode=check asks each kind for its gold-shaped answers (no switch on kind names):
    every registered kind declares them, and calls each one right."""
    from vbw.task.check import CHECKER_KINDS

    assert set(CHECKER_KINDS) == set(GOLDS)
    for kind, cls in CHECKER_KINDS.items():
        checker = cls(kind=kind)
        assert isinstance(checker.answers_complete, bool)
        answers = checker.gold_answers(GOLDS[kind], {})
        assert answers, kind
        assert all(checker.check(a, GOLDS[kind], SCHEMA) for a in answers), (kind, answers)


def test_regex_answers_meet_the_schema_pattern_where_they_can() -> None:
    rx = RegexChecker(kind="regex")
    answers = rx.gold_answers(r"\w+", {"type": "string", "pattern": "^z{3}$"})
    assert "zzz" in answers and all(rx.check(a, r"\w+") for a in answers)
    assert rx.gold_answers(r"(a)\1", {}) == []  # not invertible: none, never a wrong one
    fixed = RegexChecker(kind="regex", pattern=r"\d\d")
    assert fixed.gold_answers("ignored", {}) == ["00"]
    assert not rx.answers_complete


def test_exact_compares_as_json_values_do_with_booleans_apart() -> None:
    from vbw.task.check import ExactChecker

    exact = ExactChecker(kind="exact")
    assert exact.check(True, True) and not exact.check(True, 1) and not exact.check(0, False)
    assert exact.check(2, 2.0) and not exact.check(2, 3)
    assert exact.check(["a", [True]], ["a", [True]]) and not exact.check(["a", [1]], ["a", [True]])
    assert exact.check({"x": False}, {"x": False}) and not exact.check({"x": 0}, {"x": False})
    assert not exact.check({"x": 1}, {"x": 1, "y": 2}) and not exact.check("a", "a ")
    assert exact.gold_answers(False) == [False]
