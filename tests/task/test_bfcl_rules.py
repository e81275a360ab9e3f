"""`call_args` with `rules: bfcl_official` (vbw.task.bfcl_rules): one case per BFCL rule, and
on every committed BFCL replay the figures BFCL's own checker gives (tests/task/data/
bfcl_official/README.md says how those were made, outside the project)."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_vbw
from vbw.task.bfcl_rules import MAX_CALLS, calls_reason, official_reason, standardize
from vbw.task.check import CallArgsChecker

REFERENCE = Path(__file__).parent / "data" / "bfcl_official" / "reference.json"
REFERENCE_CALLS = REFERENCE.with_name("reference_calls.json")
official = CallArgsChecker(kind="call_args", rules="bfcl_official")
simplified = CallArgsChecker(kind="call_args")


def schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or []}


NUM = schema({"x": {"type": "number"}, "n": {"type": "integer"}})
STR = schema({"s": {"type": "string"}, "unit": {"type": "string"}}, ["s"])


def test_int_for_float_is_right_float_for_int_is_wrong() -> None:
    gold = {"x": [2.0], "n": [5]}
    assert official_reason({"x": 2, "n": 5}, gold, NUM) is None
    assert official_reason({"x": 2.0, "n": 5.0}, gold, NUM) == "type"
    assert simplified.check({"x": 2.0, "n": 5.0}, gold, NUM)  # the simplified rules coerce
    assert official_reason({"x": 2.0, "n": True}, gold, NUM) == "type"  # bool is not int


def test_string_normalisation_strips_lowers_and_folds_quotes() -> None:
    assert standardize("New York, N.Y.") == "newyorkny"
    assert standardize("it's_A-b*c^d/e") == 'it"sabcde'
    gold = {"s": ["San Francisco"], "unit": ['"m"', ""]}
    assert official.check({"s": "san_francisco", "unit": "'M'"}, gold, STR)
    assert not official.check({"s": "San Fran"}, gold, STR)
    assert not official.check({"s": "San Francisco!"}, gold, STR)


def test_optional_marked_by_empty_string_and_missing_ones() -> None:
    gold = {"s": ["a"], "unit": ["cm", ""]}
    assert official_reason({"s": "a"}, gold, STR) is None
    assert official_reason({"unit": "cm"}, gold, STR) == "missing_required"
    assert official_reason({"s": "a"}, {"s": ["a"], "unit": ["cm"]}, STR) == "missing_optional"
    # quirk (l. 189-192): "" is normalised too, so a blank string is an allowed optional
    assert official_reason({"s": "a", "unit": " -"}, gold, STR) is None


def test_unexpected_parameters_are_rejected() -> None:
    gold = {"s": ["a"]}
    assert official_reason({"s": "a", "other": 1}, gold, STR) == "unexpected_param"
    # declared in the function but absent from the possible answer: rejected as well
    assert official_reason({"s": "a", "unit": "cm"}, gold, STR) == "unexpected_param"
    assert simplified.check({"s": "a", "unit": "cm"}, gold, STR)


def test_list_order_counts_and_strings_inside_are_normalised() -> None:
    sch = schema({"l": {"type": "array", "items": {"type": "string"}}})
    gold = {"l": [["New York", "Boston"]]}
    assert official_reason({"l": ["new_york", "BOSTON"]}, gold, sch) is None
    assert official_reason({"l": ["Boston", "New York"]}, gold, sch) == "list_value"
    # quirk (l. 216-224): an optional array's "" stands for the empty list
    assert official_reason({"l": []}, {"l": [["a"], ""]}, sch) is None


def test_nested_types_are_checked_one_level_deep() -> None:
    sch = schema({"l": {"type": "array", "items": {"type": "number"}}})
    assert official_reason({"l": [1.5, "2"]}, {"l": [[1.5, 2.0]]}, sch) == "nested_type"
    # no int-for-float inside a list, unless the allowed list starts with an integer
    assert official_reason({"l": [1.5, 2]}, {"l": [[1.5, 2.0]]}, sch) == "nested_type"
    assert official_reason({"l": [1, 2]}, {"l": [[1, 2]]}, sch) is None
    # a boolean is not an integer inside a list either (True == 1 would pass the values)
    ints = schema({"l": {"type": "array", "items": {"type": "integer"}}})
    assert official_reason({"l": [1, True]}, {"l": [[1, 1]]}, ints) == "nested_type"
    assert official_reason({"l": [1, 1]}, {"l": [[1, 1]]}, ints) is None
    deep = schema({"l": {"type": "array", "items": {"type": "array",
                                                     "items": {"type": "integer"}}}})
    assert official_reason({"l": [[1.0]]}, {"l": [[[1]]]}, deep) is None  # 1 == 1.0, unchecked


def test_dicts_compare_keys_and_values_as_bfcl_does() -> None:
    sch = schema({"d": {"type": "object", "properties": {"k": {"type": "integer"},
                                                         "c": {"type": "string"}}}})
    gold = {"d": [{"k": [5], "c": ["New York", ""]}]}
    assert official_reason({"d": {"k": 5, "c": "new york"}}, gold, sch) is None
    assert official_reason({"d": {"k": 5.0}}, gold, sch) is None  # values: Python equality
    assert official_reason({"d": {"k": 5, "z": 1}}, gold, sch) == "dict_value"
    assert official_reason({"d": {"c": "New York"}}, gold, sch) == "dict_value"  # k missing
    items = schema({"l": {"type": "array", "items": {"type": "object"}}})
    lgold = {"l": [[{"a": [1]}, {"a": [2]}]]}
    assert official_reason({"l": [{"a": 1}, {"a": 2}]}, lgold, items) is None
    assert official_reason({"l": [{"a": 2}, {"a": 1}]}, lgold, items) == "dict_value"


def test_any_is_a_string_and_variables_pass_by_the_answers_type() -> None:
    sch = schema({"v": {"type": ["string", "number", "integer", "boolean", "array",
                                 "object", "null"]}, "s": {"type": "string"}})
    assert official_reason({"v": "X y"}, {"v": ["xy"]}, sch) is None
    assert official_reason({"v": 3}, {"v": ["3"]}, sch) == "type"
    # quirk (l. 116-120): a value of the allowed values' type passes as a "variable", and
    # is then compared by Python equality only
    assert official_reason({"s": True}, {"s": ["", True]}, sch) is None
    assert official_reason({"s": False}, {"s": ["", True]}, sch) == "other_value"


def test_not_an_object_and_unknown_types_are_wrong() -> None:
    assert official_reason(["a"], {"s": ["a"]}, STR) == "not_arguments"
    assert official_reason({"q": 1}, {"q": [1]}, schema({"q": {"type": "null"}})) == \
        "unknown_type"
    assert official_reason({"q": [1]}, {"q": [[1]]}, schema({"q": {"type": "array"}})) == \
        "unknown_type"


def test_gold_shaped_answer_is_right_under_both_rules() -> None:
    sch = schema({"s": {"type": "string"}, "l": {"type": "array", "items": {"type": "string"}},
                  "x": {"type": "number"}}, ["s"])
    gold = {"s": ["a b"], "l": [["x", "y"], ""], "x": [1, ""]}
    (answer,) = official.gold_answers(gold, sch)
    assert official.check(answer, gold, sch) and simplified.check(answer, gold, sch)


F_ARGS = schema({"x": {"type": "integer"}}, ["x"])
CALLS = {"type": "array", "items": {"anyOf": [
    {"type": "object", "properties": {"f": F_ARGS}},
    {"type": "object", "properties": {"g": schema({"s": {"type": "string"}})}}]}}


def test_parallel_calls_match_in_any_order_with_bfcls_greedy_pairing() -> None:
    gold = [{"f": {"x": [1]}}, {"g": {"s": ["a b"]}}]
    assert calls_reason([{"g": {"s": "A_B"}}, {"f": {"x": 1}}], gold, CALLS) is None
    assert official.check([{"f": {"x": 1}}, {"g": {"s": "ab"}}], gold, CALLS)
    assert calls_reason([{"f": {"x": 1}}], gold, CALLS) == "wrong_count"
    assert calls_reason([{"f": {"x": 1}}, {"h": {"s": "ab"}}], gold, CALLS) == "no_match"
    assert calls_reason({"f": {"x": 1}}, gold, CALLS) == "not_arguments"
    # quirk (l. 579-593): each expected call takes the first free call that matches it, for
    # good, so this answer fails although the other pairing would match both
    greedy = [{"f": {"x": [1, 2]}}, {"f": {"x": [1]}}]
    assert calls_reason([{"f": {"x": 1}}, {"f": {"x": 2}}], greedy, CALLS) == "no_match"
    assert calls_reason([{"f": {"x": 2}}, {"f": {"x": 1}}], greedy, CALLS) is None


def test_parallel_matching_is_bounded_at_max_calls() -> None:
    """Each expected call is compared with every free call: MAX_CALLS calls, all for the
    same function and matched in reverse order (the greedy search's worst case), are
    matched; one more is wrong without matching. Either takes well under a second."""
    def item(n: int) -> tuple[list[Any], list[Any]]:
        return ([{"f": {"x": i}} for i in reversed(range(n))],
                [{"f": {"x": [i]}} for i in range(n)])

    start = time.perf_counter()
    assert calls_reason(*item(MAX_CALLS), CALLS) is None
    assert calls_reason(*item(MAX_CALLS + 1), CALLS) == "too_many_calls"
    assert calls_reason(*item(3000), CALLS) == "too_many_calls"
    assert time.perf_counter() - start < 0.5


def test_multiple_is_one_call_to_the_right_function() -> None:
    gold = [{"g": {"s": ["x"]}}]
    assert official.check([{"g": {"s": "X"}}], gold, CALLS)
    assert calls_reason([{"f": {"x": 1}}], gold, CALLS) == "no_match"
    answer, without_optional = official.gold_answers(gold, CALLS)
    assert answer == without_optional == [{"g": {"s": "x"}}]
    assert official.check(answer, gold, CALLS)
    assert not simplified.gold_answers(gold, CALLS)  # lists of calls: bfcl_official only


def test_gold_shaped_calls_also_leave_optional_parameters_out() -> None:
    """BFCL's gold may allow an optional parameter the function does not declare (e.g.
    parallel_multiple_12), which BFCL rejects when given: the second candidate leaves it
    out, and is the one called right."""
    gold = [{"f": {"x": [1], "p": ["", 0.1]}}]
    full, bare = official.gold_answers(gold, CALLS)
    assert full == [{"f": {"x": 1, "p": 0.1}}] and bare == [{"f": {"x": 1}}]
    assert calls_reason(full, gold, CALLS) == "no_match"  # p: unexpected
    assert calls_reason(bare, gold, CALLS) is None
    wrapped = {"type": "object", "properties": {"calls": CALLS}}  # CallsSchema's shape
    assert calls_reason(bare, gold, wrapped) is None


def _ledger_right(path: Path) -> dict[str, set[str]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    arms = [k for k in rows[0] if k != "id"]
    return {a: {r["id"] for r in rows if r[a].endswith("/right")} for a in arms}


@pytest.mark.parametrize("replay", sorted(json.loads(REFERENCE.read_text(encoding="utf-8"))))
def test_vbw_gives_bfcls_own_figures_on_each_committed_replay(replay: str,
                                                              tmp_path: Path) -> None:
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))[replay]
    tools = ["arms=tools"] if "tool_call[arguments]" in expected else []  # a server's run
    proc = run_vbw("task=bfcl_simple", f"replay={ROOT / replay}", *tools,
                   "task.check.rules=bfcl_official", f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    right = _ledger_right(tmp_path / "ledger.csv")
    assert set(report["arms"]) == set(expected)
    for arm, ref in expected.items():
        m = report["arms"][arm]
        assert m["n"] == ref["n"], arm
        assert round(m["answer_accuracy"]["rate"] * m["n"]) == ref["right"], arm
        assert right[arm] == set(ref["right_ids"]), arm


def _calls_reference() -> dict[str, Any]:
    return json.loads(REFERENCE_CALLS.read_text(encoding="utf-8"))


@pytest.mark.parametrize("replay", sorted(_calls_reference()))
def test_vbw_gives_bfcls_own_figures_on_each_committed_calls_replay(replay: str,
                                                                    tmp_path: Path) -> None:
    """bfcl_multiple, bfcl_parallel, bfcl_parallel_multiple: their committed replays
    re-score (default rules: bfcl_official) to the accuracy and the very items BFCL's
    ast_checker calls right on the same extracted calls (order-free matching included)."""
    expected = _calls_reference()[replay]
    proc = run_vbw(f"task={expected['task']}", f"replay={ROOT / replay}",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "gold-shaped" not in proc.stderr  # the task audit finds nothing on its items
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    right = _ledger_right(tmp_path / "ledger.csv")
    assert set(report["arms"]) == set(expected["arms"])
    for arm, ref in expected["arms"].items():
        m = report["arms"][arm]
        assert m["n"] == ref["n"], arm
        assert round(m["answer_accuracy"]["rate"] * m["n"]) == ref["right"], arm
        assert right[arm] == set(ref["right_ids"]), arm
