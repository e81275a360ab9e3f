"""vbw.generate.conformance.run: every schema in its own limited child, in order; a
schema that runs past its time limit, crashes the engine or is refused is that schema's
outcome, and the others are still walked (scripted engine and tokenizer: fakes.py)."""

from __future__ import annotations

import time

from tests.generate.conformance.fakes import CharTokens, TextsEngine
from vbw.generate.conformance.run import check_cases
from vbw.task.conformance import Case, Instance

GOOD = Case("good", "type", {"x-texts": [{"a": 1}]},
            [Instance("one", {"a": 1}, True, "type"), Instance("two", {"a": 2}, True, "type"),
             Instance("string", {"a": "x"}, False, "type")])


def test_each_schema_outcome_in_order_despite_slow_crashing_and_refused_schemas():
    cases = [Case("slow", "s", {"x-sleep": 30, "x-texts": [1]}, [Instance("1", 1, True, "s")]),
             Case("abort", "a", {"x-abort": True, "x-texts": [1]}, [Instance("1", 1, True, "a")]),
             Case("refused", "r", {"x-refuse": True}, [Instance("1", 1, True, "r")]),
             GOOD]
    start = time.monotonic()
    outcomes, masks, wrong = check_cases(TextsEngine(None, True, "compact"), cases,
                                         CharTokens(), seconds=1.0)
    assert time.monotonic() - start < 10  # the 30 s compile was cut at its limit
    assert [o.schema_id for o in outcomes] == ["slow", "abort", "refused", "good"]
    assert outcomes[0].reason == "timed out after 1 s" and not outcomes[0].compiled
    assert outcomes[1].reason == "the engine crashed (SIGABRT)"
    assert outcomes[2].reason == "engine texts cannot compile the schema: refused on purpose"
    good = outcomes[3]
    assert good.compiled and (good.valid_accepted, good.valid_rejected) == (1, 1)
    assert (good.invalid_accepted, good.invalid_rejected) == (0, 1)
    assert good.sound and not good.exact
    assert [m.size for m in masks[:3]] == [0, 0, 0] and masks[3].size > 0
    assert [(w.kind, w.instance, w.token, w.piece) for w in wrong] == [
        ("rejected valid", "two", 5, "2")]  # compact only under compact whitespace


def test_flexible_whitespace_walks_the_spaced_text_too():
    outcomes, _, wrong = check_cases(TextsEngine(None, True, "flexible"), [GOOD], CharTokens(),
                                     seconds=10)
    assert [(w.serialisation, w.text, w.token) for w in wrong] == [
        ("compact", '{"a":2}', 5), ("spaced", '{"a": 2}', 6)]
    assert outcomes[0].valid_accepted == 2  # {"a":1} in both texts


def test_the_time_limit_counts_from_each_schemas_start():
    """Two 0.6 s compiles under a 1 s limit both finish, whichever waits for the other."""
    cases = [Case(f"c{i}", "s", {"x-sleep": 0.6, "x-texts": [1], "i": i},
                  [Instance("1", 1, True, "s")]) for i in range(3)]
    outcomes, _, _ = check_cases(TextsEngine(None, True, "compact"), cases, CharTokens(),
                                 seconds=1.0)
    assert all(o.compiled for o in outcomes), [o.reason for o in outcomes]
