"""Sampled decoding (vbw.generate.sampling): seeds derived per sample, the chain draws
exactly from the distribution the mask and truncations leave, the tax is -log of the mass
the grammar left, on a scripted model and on SmolLM2 (recomputed independently)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from tests.generate import fakellama as fl
from vbw.config import DecodingConfig
from vbw.generate.backend import Sampling
from vbw.generate.sampling import (choose, request_sampling, sample_seed, step_noise,
                                   tax_step)

LOGITS = np.array([2.0, 1.5, 0.3, -0.4, 1.1, -2.0], dtype=np.float32)


def _frequencies(s: Sampling, mask: np.ndarray | None, draws: int = 60_000) -> np.ndarray:
    rng = np.random.default_rng(7)
    counts = np.zeros(LOGITS.size)
    for _ in range(draws):
        counts[choose(LOGITS, s, step_noise(rng, LOGITS.size), mask)] += 1
    return counts


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def _assert_drawn_from(counts: np.ndarray, want: np.ndarray) -> None:
    support = want > 0
    assert counts[~support].sum() == 0  # never a token outside the support
    expected = want[support] * counts.sum()
    assert chisquare(counts[support], expected).pvalue > 1e-3


def test_the_seed_derives_from_seed_item_arm_and_index() -> None:
    text = "1234\x00gsm8k_test_0\x00constrained[answer]\x002".encode()
    want = int.from_bytes(hashlib.sha256(text).digest()[:4], "big") & 0x7FFFFFFF
    assert sample_seed(1234, "gsm8k_test_0", "constrained[answer]", 2) == want
    others = {sample_seed(1235, "gsm8k_test_0", "constrained[answer]", 2),
              sample_seed(1234, "gsm8k_test_1", "constrained[answer]", 2),
              sample_seed(1234, "gsm8k_test_0", "unconstrained", 2),
              sample_seed(1234, "gsm8k_test_0", "constrained[answer]", 1)}
    assert want not in others and len(others) == 4
    assert all(0 <= s < 2**31 for s in others)


def test_greedy_requests_carry_no_sampler() -> None:
    assert request_sampling(DecodingConfig(), "a", "unconstrained", 0) is None
    s = request_sampling(DecodingConfig(temperature=0.7, top_k=5, seed=9), "a", "x", 3)
    assert s == Sampling(temperature=0.7, top_k=5, seed=sample_seed(9, "a", "x", 3))


@pytest.mark.parametrize("t", [0.5, 1.0, 2.0])
def test_temperature_draws_the_softmax(t: float) -> None:
    _assert_drawn_from(_frequencies(Sampling(temperature=t, seed=0), None),
                       _softmax(LOGITS.astype(np.float64) / t))


def test_the_noise_is_finite_where_float32_draws_hit_zero() -> None:
    # seed 2's 10^7 float32 exponentials hold 3 exact zeros (noise +inf: that token drawn
    # whatever its probability); step_noise draws float64, never 0
    assert (np.random.default_rng(2).standard_exponential(10**7, dtype=np.float32) == 0).sum() == 3
    noise = step_noise(np.random.default_rng(2), 10**7)
    assert noise.dtype == np.float64 and np.isfinite(noise).all()


def test_the_mask_is_applied_before_the_sampler() -> None:
    mask = np.array([False, True, True, False, True, False])
    want = np.where(mask, _softmax(LOGITS.astype(np.float64) / 0.8), 0.0)
    _assert_drawn_from(_frequencies(Sampling(temperature=0.8, seed=0), mask), want / want.sum())


def test_truncations_follow_llama_cpps_order() -> None:
    p = _softmax(LOGITS.astype(np.float64))
    # top_k=3 keeps tokens 0, 1, 4; then temperature over them
    keep = np.isin(np.arange(6), [0, 1, 4])
    want = np.where(keep, _softmax(LOGITS.astype(np.float64) / 0.7), 0.0)
    _assert_drawn_from(_frequencies(Sampling(temperature=0.7, top_k=3, seed=0), None),
                       want / want.sum())
    # top_p at exactly the mass of the top two: the token that crosses it stays, so
    # 0.0001 more brings the third in
    top2 = p[0] + p[1]
    for top_p, kept in ((top2 - 1e-6, [0, 1]), (top2 + 1e-4, [0, 1, 4])):
        want = np.where(np.isin(np.arange(6), kept), p ** (1 / 0.7), 0.0)
        _assert_drawn_from(_frequencies(Sampling(temperature=0.7, top_p=top_p, seed=0),
                                        None, 20_000), want / want.sum())
    # min_p keeps p >= min_p * max p, the boundary token included
    ratio = p[4] / p[0]
    for min_p, kept in ((ratio, [0, 1, 4]), (ratio + 1e-6, [0, 1])):
        got = _frequencies(Sampling(temperature=1.0, min_p=min_p, seed=0), None, 5_000)
        assert set(np.flatnonzero(got)) == set(kept)


def test_the_tax_is_minus_log_of_the_allowed_mass() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        logits = rng.normal(scale=4, size=300).astype(np.float32)
        mask = rng.random(300) < 0.3
        mask[0] = True
        x = logits.astype(np.float64)
        want = logsumexp(x) - logsumexp(x[mask])
        assert tax_step(logits, mask) == pytest.approx(want, rel=1e-6, abs=1e-9)
    everything = np.ones(300, dtype=bool)
    assert tax_step(logits, everything) == 0.0
    # tokens without mass in float32 (120 nats below the top) removed: still exactly 0
    far = logits.copy()
    far[:10] = far.max() - 120.0
    assert tax_step(far, np.arange(300) >= 10) == 0.0
    # only such a token allowed: the kept mass underflows float32, recomputed in float64
    assert tax_step(far, np.arange(300) == 0) == pytest.approx(
        logsumexp(far.astype(np.float64)) - float(far[0]), rel=1e-9)
    assert tax_step(far, np.zeros(300, dtype=bool)) == math.inf


WANTED = [1, 4, 5, 3, 2]  # the scripted model's argmaxes: {ab"}
PROMPT = [9, 9]


def _sampled(rule: fl.ScriptedRule | None, seed: int, temperature: float = 1.0):
    rt = fl.runtime(fl.scripted_model(WANTED, len(PROMPT), seed=4))
    return rt.complete(PROMPT, max_tokens=8, rule=rule,
                       sampling=Sampling(temperature=temperature, seed=seed))


ALLOWED = [{1}, {3, 4, 5}, {3, 4, 5}, {3, 2}, {2}, {0}]


def test_a_sampled_generation_is_its_seeds_and_its_tax_is_recomputed() -> None:
    model = fl.scripted_model(WANTED, len(PROMPT), seed=4)
    texts, events = set(), 0
    for seed in range(12):
        a, b = _sampled(fl.ScriptedRule(ALLOWED), seed), _sampled(fl.ScriptedRule(ALLOWED), seed)
        timing = {"seconds", "ttft_seconds"}
        assert a.model_dump(exclude=timing) == b.model_dump(exclude=timing)  # same seed
        texts.add(a.text)
        # the tax recomputed from the model's logits along the generated tokens
        tokens = [t for ch in a.text for t, v in fl.VOCAB.items() if v == ch.encode()]
        context, want = list(PROMPT), 0.0
        for k in range(len(tokens) + (a.finish_reason == "stop")):
            x = model(context).astype(np.float64)
            allowed = sorted(ALLOWED[k]) if k < len(ALLOWED) else [0]
            want += logsumexp(x) - logsumexp(x[allowed])
            context += tokens[k:k + 1]
        assert a.tax == pytest.approx(want, abs=2e-6)
        for ev in a.interventions or []:
            assert ev.wanted != ev.forced
        events += len(a.interventions or [])
    assert len(texts) > 1 and events > 0  # the seeds draw different texts; the rule bites


def test_an_unmasked_rule_costs_no_tax_and_changes_nothing() -> None:
    everything = [set(fl.VOCAB)] * 9
    for seed in range(5):
        free = _sampled(None, seed)
        ruled = _sampled(fl.ScriptedRule(everything), seed)
        assert ruled.tax == 0.0 and ruled.interventions == []
        assert ruled.text == free.text and free.tax is None


def test_a_rule_that_allows_nothing_ends_a_sampled_generation_loudly() -> None:
    from vbw.errors import EngineError

    class Masking(fl.ScriptedRule):
        """Gives its mask directly (as the llguidance and outlines rules do)."""

        def mask(self, logits):
            return np.isin(np.arange(fl.N_VOCAB), sorted(self._now()))

    with pytest.raises(EngineError, match="^the constraint allows no token at this point$"):
        _sampled(Masking([{1}, set()]), seed=0)


def test_greedy_records_the_tax_too() -> None:
    rt = fl.runtime(fl.scripted_model(WANTED, len(PROMPT), seed=4))
    gen = rt.complete(PROMPT, max_tokens=8, rule=fl.ScriptedRule(ALLOWED))
    assert gen.text == '{ab"}' and gen.tax is not None and gen.tax > 0


def _independent_tax(smollm2_file, prompt: list[int], tokens: list[int], grammar: str,
                     tokenizer, stopped: bool) -> float:
    """The tax recomputed apart from vbw's loop: logits from llama-cpp-python's high-level
    `Llama.eval` (a second model instance, logits of every position), masks from a fresh
    llguidance matcher's own bitmask, -log allowed mass summed in float64."""
    import llama_cpp
    import llguidance

    from tests.generate.conftest import THREADS
    from vbw.generate.repack import extra_bufts, resolve

    with extra_bufts(llama_cpp, resolve("auto")):
        llm = llama_cpp.Llama(model_path=smollm2_file.path, n_ctx=2048, logits_all=True,
                    n_threads=THREADS or None, verbose=False)
    llm.eval(prompt)
    for t in tokens:
        llm.eval([t])
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    n_vocab = llm.n_vocab()
    total = 0.0
    for k in range(len(tokens) + stopped):
        x = np.asarray(llm.scores[len(prompt) - 1 + k], dtype=np.float64)
        bits = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, bitorder="little")[:n_vocab].astype(bool)
        total += logsumexp(x) - logsumexp(x[allowed])
        if k < len(tokens):
            assert matcher.consume_token(tokens[k])
    return total


@pytest.mark.live
@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_the_tax_on_smollm2_matches_an_independent_recomputation(
        runtime, engines, smollm2_file, temperature: float) -> None:
    from tests.conftest import TASK_CONF
    from vbw.task.arms import Arm
    from vbw.task.runner import load_task

    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    engine = engines["llguidance"]
    for item in task.items(3):
        arm = Arm("constrained", "arguments")
        constraint, _ = engine.compile(item.schemas["arguments"])
        prompt = runtime.chat_tokens(task.messages(item, arm))
        runtime.clear_kv()
        sampling = (None if temperature == 0 else
                    Sampling(temperature=temperature, seed=sample_seed(1, item.id, arm.key, 0)))
        done = runtime.decoder.run(prompt, 60, constraint.rule(), True, sampling)
        want = _independent_tax(smollm2_file, prompt, done.tokens, constraint.grammar,
                                constraint.tokenizer, done.finish_reason == "stop")
        assert done.tax is not None and done.tax > 0
        # float32 exponentials summed in float64 against float64 throughout: ~1e-8 apart
        assert done.tax == pytest.approx(want, rel=1e-6), item.id
