"""vbw.generate.conformance.walk on the real SmolLM2 tokenizer: planted engines over
llguidance, one that lets one invalid token through (reported unsound, the token named
where the reference engine cuts it) and one that refuses one token of a valid instance
(reported inexact, naming the instance, the token and its character); and the walk
itself on the scripted tokenizer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.generate.conformance.fakes import CharTokens, TextsEngine
from vbw.generate.conformance.walk import Tokens, check_case, walk
from vbw.generate.engines.base import Constraint, Engine
from vbw.score.conformance import engine_report
from vbw.task.conformance import Case, Instance

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
          "additionalProperties": False}
VALID, INVALID = {"n": 27}, {"n": "27"}


class PlantedRule:
    """The inner rule, but `extra` allowed where the inner refuses it (then everything:
    the inner state cannot follow) and `refused` never allowed."""

    def __init__(self, inner: Any, extra: int | None, refused: int | None) -> None:
        self.inner, self.extra, self.refused, self.free = inner, extra, refused, False

    def allows(self, token: int) -> bool:
        if token == self.refused:
            return False
        return self.free or self.inner.allows(token) or token == self.extra

    def mask(self, logits: np.ndarray) -> np.ndarray:
        if self.free:
            return np.ones(logits.size, dtype=bool)
        m = self.inner.mask(logits).copy()
        if self.extra is not None:
            m[self.extra] = True
        if self.refused is not None:
            m[self.refused] = False
        return m

    def accept(self, token: int) -> None:
        if not self.free and not self.inner.allows(token):
            self.free = True  # the planted token: the inner grammar is left behind
            return
        if not self.free:
            self.inner.accept(token)


class PlantedConstraint(Constraint):
    def __init__(self, inner: Constraint, extra: int | None, refused: int | None) -> None:
        self.inner, self.extra, self.refused = inner, extra, refused

    def rule(self) -> PlantedRule:
        return PlantedRule(self.inner.rule(), self.extra, self.refused)


def planted(engines: dict[str, Engine], extra: int | None = None,
            refused: int | None = None) -> Engine:
    base = engines["llguidance"]

    class Planted(Engine):
        name = "planted"

        def _compile(self, schema: Any, key: str) -> Constraint:
            return PlantedConstraint(base.compile(schema)[0], extra, refused)

    return Planted(base.runtime, True, "compact")


@pytest.fixture(scope="module")
def tok(runtime):
    return Tokens(runtime)


def case() -> Case:
    return Case("planted #0: an integer n", "type", SCHEMA,
                [Instance("n is 27", VALID, True, "type"),
                 Instance("n is a string", INVALID, False, "type")])


def test_llguidance_itself_is_sound_and_exact_here(engines, tok):
    outcome, times, wrong = check_case(engines["llguidance"], case(), tok)
    assert outcome.sound and outcome.exact and wrong == []
    cut = walk(engines["llguidance"].compile(SCHEMA)[0], tok('{"n":"27"}'), tok.eog,
               tok.n_vocab, False)
    # a mask timed per step of each instance's first (compact) text, up to its cut
    assert times.size == len(tok('{"n":27}')) + cut.token + 1


def test_a_planted_invalid_token_is_reported_unsound_naming_the_token(engines, tok):
    tokens = tok('{"n":"27"}')
    cut = walk(engines["llguidance"].compile(SCHEMA)[0], tokens, tok.eog, tok.n_vocab, False)
    assert not cut.accepted and cut.token is not None
    engine = planted(engines, extra=tokens[cut.token])
    outcome, times, wrong = check_case(engine, case(), tok, reference=engines["llguidance"])
    assert not outcome.sound and outcome.exact and outcome.invalid_accepted == 1
    [w] = wrong
    assert (w.kind, w.instance, w.keyword, w.cut_by) == (
        "accepted invalid", "n is a string", "type", "llguidance")
    assert w.token == cut.token and w.piece == tok.piece(tokens[cut.token]).decode()
    report = engine_report("planted", "compact", [outcome], [times], wrong, 0.1)
    assert (report.all.sound, report.all.exact, report.all.invalid_accepted) == (0, 1, 1)


def test_a_planted_refusal_is_reported_inexact_naming_instance_and_token(engines, tok):
    tokens = tok('{"n":27}')
    digit = next(i for i, t in enumerate(tokens) if b"27" in tok.piece(t) or
                 tok.piece(t) in (b"2", b"27"))
    engine = planted(engines, refused=tokens[digit])
    outcome, _, wrong = check_case(engine, case(), tok)
    assert outcome.sound and not outcome.exact and outcome.valid_rejected == 1
    [w] = wrong
    assert (w.kind, w.instance, w.text, w.token, w.cut_by) == (
        "rejected valid", "n is 27", '{"n":27}', digit, "planted")
    assert w.char == len(b"".join(tok.piece(t) for t in tokens[:digit]).decode())
    assert w.piece == tok.piece(tokens[digit]).decode()


def test_walk_cuts_at_the_refused_token_and_at_an_end_that_may_not_stop():
    tok, engine = CharTokens(), TextsEngine(None, True, "compact")
    constraint = engine.compile({"x-texts": ["ab"]})[0]
    assert walk(constraint, tok('"ab"'), tok.eog, tok.n_vocab, True).accepted
    refused = walk(constraint, tok('"ax"'), tok.eog, tok.n_vocab, True)
    assert (refused.accepted, refused.token, len(refused.mask_ns)) == (False, 2, 3)
    short = walk(constraint, tok('"a'), tok.eog, tok.n_vocab, False)
    assert (short.accepted, short.token, short.mask_ns) == (False, 2, [])  # the end: index 2
