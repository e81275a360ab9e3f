"""Hostile model outputs: every extraction step on megabytes of adversarial text, with a
time bound and the result it must give; huge integers; a hostile replay end to end. (That
the linear-time rewrites answer exactly as the original code did is test_differential.py.)

The time bounds are generous (this suite shares the machine with other work) but each is
far below what the original code took on the same input: seconds at 1 MB became minutes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from tests.benchmarks.bench_hostile import (E2E_TEXTS, REGEXES, hostile_replay, regex_replay,
                                            regex_task)
from tests.conftest import ROOT, TASK_CONF, load_json, run_vbw
from tests.task.test_regex import NATURAL
from vbw.task.validity import Validators
from vbw.task.check import NumericChecker
from vbw.task.coerce import NumberCoercion, last_number, number_from_text
from vbw.task.extract import BoxedStep, LastNumberStep, RegexStep
from vbw.task.jsontext.grammar import POSSESSIVE
from vbw.task.jsontext.scan import MAX_DEPTH, first_json_object
from vbw.task.jsontext.values import JsonBigInt
from vbw.task.runner import load_task

NATURAL_PATTERNS = list(NATURAL)

MB = 1 << 20


@pytest.fixture(scope="module")
def bfcl():
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    return task, task.items(1)[0]


def timed(fn: Callable[[], Any], bound: float) -> Any:
    t = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t
    assert took < bound, f"took {took:.2f} s (bound {bound} s)"
    return out


# -- adversarial inputs, each step ----------------------------------------------------------
FREE_TEXT = {  # gsm8k free chain: text -> answer
    "spaces after Answer:": ("Answer:" + " " * MB + "x", None),
    "spaces, then a number": ("Answer:" + " " * MB + "7", 7.0),
    "stars and spaces": ("Answer:" + " *" * (MB // 2) + "5", 5.0),  # regex fails; last number
    "Answer: x many": ("Answer: " * (MB // 8) + "3", 3.0),
    "boxed unclosed": ("\\boxed{" * (MB // 7) + "12", 12.0),
    "one huge number": ("1," * (MB // 2), float("inf")),  # its float overflows: inf, no error
}


@pytest.mark.parametrize("name", list(FREE_TEXT))
def test_gsm8k_free_chain_on_hostile_text(gsm8k, name: str) -> None:
    task, item = gsm8k
    text, expected = FREE_TEXT[name]
    assert timed(lambda: task.extract(text, item, free=True).answer, 3.0) == expected


JSON_TEXT = {  # text -> the first JSON object
    "{ x N": ("{" * MB, None),
    '{"a":" x N': ('{"a":"' * (MB // 6), None),
    '{"a": x N unclosed': ('{"a":' * (MB // 5), None),
    "[ x 1e5 in an object": ('{"a":' + "[" * 100_000, None),
    "{ x N then an object": ("{" * MB + '{"b": 2}', {"b": 2}),
    '{"a":1, x N': ('{"a":1,' * (MB // 7), None),
    '{"a":[ x N': ('{"a":[' * (MB // 6), None),
    "[1], x N unclosed": ('{"a":[' + "[1]," * (MB // 4), None),
    "flat members unclosed": ("{" + '"k": "v", ' * (MB // 10), None),
    "a string of {": ('{"a":"' + "{" * MB + '"}', {"a": "{" * MB}),
    "an empty object far away": ('{"a":' * (MB // 10) + "{}", {}),
    "digits unclosed": ('{"a":' + "1" * MB, None),
    "numbers in an unclosed array": ('{"a":[' + "-1.5e3," * (MB // 7), None),
    "an unclosed string of escapes": ('{"a":"' + "\\n" * (MB // 2), None),
    "spaces unclosed": ('{"a"' + " " * MB, None),
    "object members then garbage": ('{"a":1' + ',"k":{"b":1}' * (MB // 12) + " x", {"b": 1}),
}


# On Python 3.10 the JSON grammar is greedy (vbw/task/jsontext/grammar.py): linear, but it gives
# runs back one character at a time, up to ~6x slower on these texts (2 s alone for the
# worst, an unclosed array of `[1],`, against 0.3 s possessive)
JSON_BOUND = 3.0 if POSSESSIVE else 15.0


@pytest.mark.parametrize("name", list(JSON_TEXT))
def test_first_json_object_on_hostile_text(name: str) -> None:
    text, expected = JSON_TEXT[name]
    assert timed(lambda: first_json_object(text), JSON_BOUND) == expected


def test_deep_nesting_is_decided_by_the_depth_limit() -> None:
    """1e5 closed levels: the outer objects are too deep, so the first `{` whose own object
    is within MAX_DEPTH wins: the one MAX_DEPTH levels above the innermost."""
    n = 100_000
    text = '{"a":' * n + "1" + "}" * n
    got = timed(lambda: first_json_object(text), 3.0)
    depth = 0
    while isinstance(got, dict):
        got, depth = got["a"], depth + 1
    assert depth == MAX_DEPTH and got == 1
    assert timed(lambda: first_json_object("[" * n + "]" * n), 1.0) is None


CALLS = {  # bfcl python_call: text -> arguments
    "unclosed calls": ("calculate_triangle_area(" * (MB // 24), None),
    "closed at the end": ("calculate_triangle_area(" * (MB // 24) + ")", None),  # too long
    "a long name run": ("a" * MB + "(1)", None),  # a valid call, but longer than the bound
    "a call, then junk": ("calculate_triangle_area(3, 4)" + " x" * (MB // 2),
                          {"base": 3, "height": 4}),
    "no closing parenthesis": ("x(" + " y" * (MB // 2), None),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_python_call_on_hostile_text(bfcl, name: str) -> None:
    task, item = bfcl
    text, expected = CALLS[name]
    assert timed(lambda: task.extract(text, item, free=True).answer, 3.0) == expected


TEN_MB = {
    "last_number": lambda: last_number("1 " * (5 * MB)) == "1",
    "number_from_text": lambda: number_from_text("x" * (10 * MB) + "42") == 42.0,
    "number_from_text, one huge number":
        lambda: number_from_text("9" * (10 * MB)) == float("inf"),
    "last_number step":
        lambda: LastNumberStep(kind="last_number").apply("$1 " * (3 * MB), {}) == "1",
    "boxed": lambda: BoxedStep(kind="boxed").apply("\\boxed{" * (MB + MB // 2), {}) is None,
    "regex step, default bound": lambda: RegexStep(kind="regex", pattern=r"a(\d+)", group=1).apply(
        "a1 " * (3 * MB), {}) == "1",
    "first_json_object, broken objects then one": lambda: first_json_object(
        '{"k": [1, 2], ' * (MB // 2) + '"z": 0}') == {"k": [1, 2], "z": 0},
}


@pytest.mark.parametrize("name", list(TEN_MB))
def test_simple_steps_stay_linear_at_10_mb(name: str) -> None:
    assert timed(TEN_MB[name], 10.0)


def test_a_replay_with_hostile_outputs_scores_end_to_end(tmp_path: Path) -> None:
    """The bundled GSM8K replay with a 1 MB hostile output in each arm (item j, arm j),
    scored by `vbw` in a fresh process: it finishes, and each hostile output gets a state."""
    replay = hostile_replay("gsm8k", tmp_path / "r.jsonl", MB, E2E_TEXTS["gsm8k"])
    proc = timed(lambda: run_vbw("task=gsm8k", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                                 cwd=ROOT), 60.0)
    assert proc.returncode == 0, proc.stderr
    ledger = {row["id"]: row for row in load_json(tmp_path / "o" / "report.json")["ledger"]}
    assert ledger["gsm8k_test_0"]["unconstrained"] == "n/a/wrong"       # Answer: + spaces
    assert ledger["gsm8k_test_1"]["prompt_json[answer]"] == "invalid/wrong"  # { x N
    assert ledger["gsm8k_test_2"]["constrained[answer]"] == "invalid/wrong"  # {"a":" x N
    assert ledger["gsm8k_test_5"]["reason_then_constrain[answer]"] == "valid/wrong"  # digits


# -- huge integers -----------------------------------------------------------------------
def test_a_100000_digit_integer_is_a_valid_wrong_answer(gsm8k) -> None:
    """{"answer": <100,000 digits>} decodes (Python's int() would refuse: 4,300-digit limit),
    is a JSON Schema integer (valid), and compares unequal to the gold without crashing."""
    task, item = gsm8k
    text = '{"answer": ' + "7" * 100_000 + "}"
    obj = timed(lambda: first_json_object(text), 2.0)
    assert isinstance(obj["answer"], JsonBigInt) and str(obj["answer"]) == "7" * 100_000
    assert Validators().is_valid(item.schemas["answer"], obj)
    answer = task.json_answer(obj)
    assert answer == obj["answer"] and not task.is_correct(answer, item)
    assert not Validators().is_valid({"type": "integer", "multipleOf": 2}, obj["answer"])
    assert Validators().is_valid({"type": "integer", "multipleOf": 7}, obj["answer"])


def test_huge_numbers_never_crash_a_checker() -> None:
    numeric = NumericChecker(kind="numeric")
    assert not numeric.check(10 ** 400, 5) and not numeric.check(-(10 ** 400), 5)
    assert not numeric.check(JsonBigInt("1" * 5000), 1.0)
    assert NumberCoercion(kind="number").apply(JsonBigInt("9" * 5000)) is not None
    text = '{"a": ' + "1" * (5 * MB) + "}"
    assert isinstance(timed(lambda: first_json_object(text), 10.0)["a"], JsonBigInt)


# -- task regexes and schema patterns, through `vbw` ---------------------------------------
def test_a_task_with_backtracking_regexes_scores_hostile_outputs(tmp_path: Path) -> None:
    """Every pattern the old screen let through (exponential, quadratic) as a step of the
    GSM8K answer chain, on the bundled replay with the hostile outputs (5,000 characters
    for the exponential ones, 100,000 for the quadratic ones): scored within the bound."""
    task = regex_task(tmp_path / "t.yaml")
    replay = regex_replay(tmp_path / "r.jsonl")
    proc = timed(lambda: run_vbw(f"task.files=[{task}]", f"replay={replay}",
                                 f"hydra.run.dir={tmp_path}/o", cwd=tmp_path), 30.0)
    assert proc.returncode == 0, proc.stderr
    ledger = {row["id"]: row for row in load_json(tmp_path / "o" / "report.json")["ledger"]}
    assert all(ledger[f"gsm8k_test_{j}"]["unconstrained"] == "n/a/wrong"
               for j in range(len(REGEXES)))


NATURAL_ITEMS = [  # (model output, gold) of the hand-made replay, one per natural pattern
    ("Sentiment: **positive**", "positive"), ("so.\nAnswer: New York City\n", "New York City"),
    ("Rating: [[7.5]]", "7.5"), ("The answer is (C).", "c"), ("We need 42 units  \n", "42"),
]


def test_natural_regexes_and_a_hostile_schema_pattern_score(tmp_path: Path) -> None:
    """A user task whose answer chain is the natural patterns the old screen refused, and
    whose schema holds a pattern Python's re takes minutes on, scored on a hand-made replay
    whose constrained outputs are 5 kB the pattern backtracks on."""
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"q": f"q{i}", "a": gold}) + "\n"
                                              for i, (_, gold) in enumerate(NATURAL_ITEMS)))
    task = {"name": "natural", "dataset": {"path": "d.jsonl", "id": {"kind": "row_index"},
                                           "fields": {"q": "q"}, "gold": {"path": "a"}},
            "prompts": {"free": "{{ q }}", "json": "{{ q }}", "package": "{{ q }}"},
            "schemas": {"answer": {"kind": "static", "schema": {
                "type": "object", "properties": {"answer": {"type": "string",
                                                            "pattern": r"^([\w.]+\s?)+$"}}}}},
            "answer_schema": "answer",
            "extract": {"free": [{"kind": "regex", "pattern": p, "group": 1}
                                 for p in NATURAL_PATTERNS], "json": {"path": "answer"}},
            "coerce": {"kind": "string"}, "check": {"kind": "string",
                                                    "normalize": ["strip", "lower"]}}
    path = tmp_path / "natural.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False))
    hostile = json.dumps({"answer": "ab " * 1700 + "!"})
    json_arms = ["prompt_json[answer]", "constrained[answer]", "reason_then_constrain[answer]"]
    meta = {"format": "vbw-replay/1", "task": "natural", "arms": ["unconstrained", *json_arms],
            "engine": "hand", "model": {"name": "hand"},
            "task_hash": load_task(path).generation_hash()}
    lines = [json.dumps({"meta": meta})] + [
        json.dumps({"id": str(i), "arms": {"unconstrained": {"text": text},
                                           **{a: {"text": hostile} for a in json_arms}}})
        for i, (text, _) in enumerate(NATURAL_ITEMS)]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    proc = timed(lambda: run_vbw(f"task.files=[{path}]", f"replay={tmp_path / 'r.jsonl'}",
                                 f"hydra.run.dir={tmp_path}/o", cwd=tmp_path), 30.0)
    assert proc.returncode == 0, proc.stderr
    report = load_json(tmp_path / "o" / "report.json")
    states = [row["unconstrained"] for row in report["ledger"]]
    assert states == ["n/a/right"] * len(NATURAL_ITEMS), report["ledger"]
    assert {row[a] for row in report["ledger"] for a in json_arms} == {"invalid/wrong"}
