"""The thin decode loop is exact: it generates the very tokens llama-cpp-python's own
sampler chain generates (unconstrained and under a GBNF grammar), and the outlines rule's
cached bitmask path picks what the guide's plain allowed-token list picks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import TASK_CONF
from vbw.generate.engines.outlines import OutlinesRule
from vbw.generate.runtime import SAMPLING
from vbw.task.arms import Arm
from vbw.task.runner import load_task

pytestmark = pytest.mark.live

PROMPTS = ["Name three colours.", "What is 12 * 7? Answer with a number.",
           "Write a JSON object with a key 'city' naming a capital of Europe."]


def _library(runtime, tokens: list[int], max_tokens: int, grammar=None) -> list[int]:
    """llama-cpp-python's own generate loop, from a cleared cache (the reference)."""
    runtime.llm.reset()
    runtime.clear_kv()
    out: list[int] = []
    for token in runtime.llm.generate(tokens, reset=True, grammar=grammar, **SAMPLING):
        if runtime.is_eog(token) or len(out) >= max_tokens:
            break
        out.append(int(token))
    runtime.llm.reset()
    runtime.clear_kv()  # the library's KV use is not the decoder's: start clean again
    return out


def _prompts_with_schemas() -> list[tuple[list[dict], dict]]:
    """The constrained arms' chats and schemas of a few items of both bundled tasks."""
    cases = []
    for name, n in (("bfcl_simple", 3), ("gsm8k", 1)):
        task = load_task(TASK_CONF / f"{name}.yaml")
        for item in task.items(n):
            for schema in item.schemas:
                arm = Arm("constrained", schema)
                cases.append((task.messages(item, arm), item.schemas[schema]))
    return cases


def test_unconstrained_matches_the_library_loop(runtime) -> None:
    for prompt in PROMPTS:
        tokens = runtime.chat_tokens(prompt)
        ours = runtime.complete(tokens, max_tokens=40)
        theirs = _library(runtime, tokens, 40)
        assert runtime.llm.detokenize(theirs).decode("utf-8", "replace") == ours.text


def test_gbnf_greedy_first_matches_the_library_grammar_sampler(runtime, engines) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    engine = engines["llamacpp"]
    for prompt, schema in _prompts_with_schemas():
        constraint, _ = engine.compile(schema)
        tokens = runtime.chat_tokens(prompt)
        ours = runtime.complete(tokens, max_tokens=64, rule=constraint.rule())
        grammar = LlamaGrammar.from_string(constraint.gbnf.decode(), verbose=False)
        theirs = _library(runtime, tokens, 64, grammar)
        assert runtime.llm.detokenize(theirs).decode("utf-8", "replace") == ours.text
        assert ours.n_tokens > 0


class PlainOutlinesRule(OutlinesRule):
    """The reference: the guide's allowed-token list every step, no bitmask, no cache."""

    def best(self, logits: np.ndarray) -> int:
        allowed = list(self.guide.get_tokens())
        if self.guide.is_finished():
            allowed += list(self.c.eog)
        allowed = np.asarray([t for t in allowed if t < logits.shape[0]])
        masked = np.full_like(logits, -np.inf)
        masked[allowed] = logits[allowed]
        return int(masked.argmax())


def test_outlines_cached_masks_match_the_guides_token_lists(runtime, engines) -> None:
    engine = engines["outlines"]
    for prompt, schema in _prompts_with_schemas():
        constraint, _ = engine.compile(schema)
        tokens = runtime.chat_tokens(prompt)
        texts = [runtime.complete(tokens, max_tokens=64, rule=rule, greedy_first=False).text
                 for rule in (PlainOutlinesRule(constraint), constraint.rule(),
                              constraint.rule())]  # the third reuses the cached masks
        assert texts[0] == texts[1] == texts[2] and texts[0]
