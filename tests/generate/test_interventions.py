"""Interventions are what the loop did: each recorded event is a step where the model's
unconstrained argmax (recomputed by replaying the output token by token, no rule) was
refused and another token was chosen, with log-probabilities that match the raw logits;
one event per masked step; none on arms without a grammar. Plus the offset rule on
partial UTF-8 tokens and the numerics, without a model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import TASK_CONF
from tests.generate.fakellama import EOG, ScriptedRule, scripted_model
from tests.generate.fakellama import runtime as fake_runtime
from vbw.config import MaxTokens
from vbw.generate.interventions import Event, log_probs, to_interventions
from vbw.generate.items import _ORDER, generate_item
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

CAPS = MaxTokens(free=40, json=40, package=40)


# -- without a model ------------------------------------------------------------------

def test_log_probs_are_stable_and_match_a_float64_reference() -> None:
    logits = np.array([1000.0, 999.0, -5.0, 998.5], dtype=np.float32)  # naive exp overflows
    (a, b), mass = log_probs(logits, (0, 3), np.array([False, True, True, True]))
    ref = logits.astype(np.float64) - np.logaddexp.reduce(logits.astype(np.float64))
    assert a == pytest.approx(ref[0], abs=1e-12) and b == pytest.approx(ref[3], abs=1e-12)
    assert mass == pytest.approx(float(np.exp(ref[1:]).sum()), rel=1e-12)
    assert log_probs(logits, (0,))[1] is None


def _pieces(vocab: dict[int, bytes]):
    return (lambda t: vocab[t]), (lambda t: t == 0)


def test_char_offsets_count_bytes_before_the_token_and_hold_back_a_split_character() -> None:
    # tokens: "a", the first byte of "é", its second byte, "b"; 0 is end of generation
    vocab = {0: b"", 1: b"a", 2: b"\xc3", 3: b"\xa9", 4: b"b", 5: b"c"}
    piece, is_eog = _pieces(vocab)
    tokens = [1, 2, 3, 4]
    events = [Event(1, 5, 2, -0.1, -2.0, 0.3), Event(2, 5, 3, -0.1, -2.0, None),
              Event(3, 5, 4, -0.1, -2.0, 0.5), Event(4, 5, 0, -0.5, -0.7, 0.9)]
    got = to_interventions(events, tokens, piece, is_eog)
    text = b"".join(vocab[t] for t in tokens).decode()  # "aéb"
    assert [i.char for i in got] == [1, 1, 2, 3]  # the 2nd byte lands in "é" (char 1)
    assert text[got[2].char:].startswith(got[2].forced) and got[2].forced == "b"
    assert got[0].forced == "\ufffd" and got[3].forced == "" and got[3].char == len(text)
    assert got[1].allowed_mass is None and got[3].forced_id == 0 and got[0].wanted == "c"


# The decode loop on a scripted model and rule (tests/generate/fakellama.py): the model's
# argmax per output step, the tokens the rule allows there. Refused at steps 0 ("a" for
# "{"), 3 ("1" for the first byte of "é"), 5 (an end of generation for '"') and 7 (" " for
# the end of generation the rule forces); steps 1, 2, 4 and 6 take the model's own token.
WANTED = [4, 3, 5, 8, 7, EOG, 2, 9]
ALLOWED = [{1}, {3, 4}, {4, 5}, {6}, {7}, {3}, {2}]
PROMPT = [1, 9]


@pytest.mark.parametrize("greedy_first", [True, False])
def test_recorded_pos_is_the_forced_tokens_index_among_the_output(greedy_first: bool) -> None:
    rt = fake_runtime(scripted_model(WANTED, len(PROMPT)))
    gen = rt.complete(PROMPT, max_tokens=20, rule=ScriptedRule(ALLOWED),
                      greedy_first=greedy_first)
    assert gen.text == '{"b\u00e9"}' and gen.finish_reason == "stop" and gen.n_tokens == 7
    got = gen.interventions
    assert [i.pos for i in got] == [0, 3, 5, 7]
    assert [i.char for i in got] == [0, 3, 4, 6]  # "é" is one character of two tokens
    assert [(i.wanted_id, i.forced_id) for i in got] == [(4, 1), (8, 6), (EOG, 3), (9, EOG)]
    assert [(i.wanted, i.forced) for i in got] == [("a", "{"), ("1", "\ufffd"), ("", '"'),
                                                    (" ", "")]
    assert all(i.allowed_mass is not None and i.lp_wanted > i.lp_forced for i in got)


# -- live: every engine, both bundled tasks --------------------------------------------

class Runs:
    """Wraps the decoder's `run` to keep each generation's prompt, rule flag and result."""

    def __init__(self, decoder) -> None:
        self.decoder = decoder
        self.inner = decoder.run
        self.seen: list[tuple[list[int], bool, object]] = []

    def __call__(self, prompt, max_tokens, rule=None, greedy_first=True, sampling=None):
        done = self.inner(prompt, max_tokens, rule, greedy_first, sampling)
        self.seen.append((list(prompt), rule is not None, done))
        return done


def replayed_logits(decoder, prompt: list[int], tokens: list[int]) -> list[np.ndarray]:
    """The raw logits before each output token (and after the last), by evaluating the
    prompt and then the output one token at a time, as the loop does, with no rule."""
    decoder.prefill(prompt)
    out = [decoder.logits().astype(np.float64)]
    for token in tokens:
        decoder._decode((token,), len(decoder.cached))
        decoder.cached.append(token)
        out.append(decoder.logits().astype(np.float64))
    return out


@pytest.mark.live
@pytest.mark.parametrize("task_name", ["gsm8k", "bfcl_simple"])
@pytest.mark.parametrize("engine", ["outlines", "llguidance", "llamacpp"])
def test_recorded_interventions_are_the_refused_argmaxes(runtime, backends, engine: str,
                                                         task_name: str) -> None:
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    # prompt_json decodes like unconstrained (no rule): left out to keep the test short
    arms = task_arms(task.schema_names, task.spec.answer_schema,
                     [k for k in ARM_KINDS if k != "prompt_json"])
    item = task.items(1)[0]
    runs = Runs(runtime.decoder)
    runtime.decoder.run = runs
    try:
        rec = generate_item(task, item, arms, backends[engine], CAPS)
    finally:
        del runtime.decoder.run  # back to the class's method
    enforced = [a for a in sorted(arms, key=lambda a: _ORDER.get(a.kind, 2)) if a.enforced]
    constrained_runs = [(p, done) for p, ruled, done in runs.seen if ruled]
    assert len(constrained_runs) == len(enforced)
    for arm in arms:
        if not arm.enforced:
            assert rec.arms[arm.key].interventions is None, arm.key
    events = 0
    for arm, (prompt, done) in zip(enforced, constrained_runs):
        record = rec.arms[arm.key]
        tokens = done.tokens
        assert record.text == runtime.llm.detokenize(tokens).decode("utf-8", "replace")
        assert record.interventions is not None
        assert len(record.interventions) == done.masked_steps, arm.key
        logits = replayed_logits(runtime.decoder, prompt, tokens)
        for iv in record.interventions:
            x = logits[iv.pos]
            lp = x - np.logaddexp.reduce(x)
            assert iv.wanted_id == int(x.argmax())  # the model's own choice, refused
            if iv.pos < len(tokens):
                assert iv.forced_id == tokens[iv.pos]  # what the engine chose
                assert iv.forced == runtime.token_bytes(tokens[iv.pos]).decode("utf-8",
                                                                               "replace")
                if "\ufffd" not in iv.forced:
                    assert record.text[iv.char:].startswith(iv.forced)
            else:  # the constraint ended the generation
                assert runtime.is_eog(iv.forced_id) and done.finish_reason == "stop"
                assert iv.forced == "" and iv.char == len(record.text)
            assert iv.wanted_id != iv.forced_id and iv.lp_wanted >= iv.lp_forced
            assert iv.lp_wanted == pytest.approx(lp[iv.wanted_id], abs=1e-4)
            assert iv.lp_forced == pytest.approx(lp[iv.forced_id], abs=1e-4)
            assert iv.allowed_mass is not None  # all three engines give their mask
            assert math.exp(iv.lp_forced) <= iv.allowed_mass * 1.001 + 1e-9
            assert iv.allowed_mass <= 1 - math.exp(iv.lp_wanted) + 1e-3
        events += len(record.interventions)
    assert events > 0  # the check above ran on real events
