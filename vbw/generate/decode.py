"""The decode loop, as thin as llama-cpp-python's low-level API allows.

It calls `llama_decode` once per token for one sequence; vbw.generate.completion picks
each token (llama.cpp's native greedy sampler with no constraint, a `TokenRule` greedy
first and exact, or vbw.generate.sampling's chain under the rule's mask).

How it works and why: docs/design.md, section vbw.generate.decode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from vbw.errors import EngineError
from vbw.generate.backend import Sampling
from vbw.generate.completion import Completion, Decoded, TokenRule


Whitespace = Literal["flexible", "compact"]


def unpack_bitmask(words: np.ndarray, n_vocab: int) -> np.ndarray:
    """A little-endian bitmask of int32 words (outlines-core's and llguidance's format)
    as one boolean per token id."""
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:n_vocab].astype(bool)


def best_allowed(allowed: np.ndarray, logits: np.ndarray, engine: str) -> int:
    """The first highest-scoring token among `allowed` (greedy's tie rule)."""
    if not allowed.any():
        raise EngineError(f"the {engine} constraint allows no token at this point")
    return int(np.where(allowed, logits, -np.inf).argmax())


def prompt_chunks(start: int, end: int, size: int) -> list[tuple[int, int]]:
    """[start, end) in chunks of at most `size`, the last never a lone token (unless
    the whole span is one)."""
    bounds = list(range(start, end, size)) + [end]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        bounds[-2] -= 1
    return list(zip(bounds, bounds[1:]))


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def fill_prompt(batch: Any, tokens: Sequence[int], n_past: int, seq: int = 0) -> None:
    """Put `tokens` (positions from `n_past`) into `batch` as sequence `seq`, the last
    one's logits asked for: a prompt chunk, or one generated token of one sequence."""
    n = len(tokens)
    batch.n_tokens = n
    for i, token in enumerate(tokens):
        fill_row(batch, i, token, n_past + i, seq, i == n - 1)


def fill_row(batch: Any, i: int, token: int, pos: int, seq: int, logits: bool = True) -> None:
    """Row `i` of `batch`: `token` at `pos` of sequence `seq`, its logits asked for or not."""
    batch.token[i] = token
    batch.pos[i] = pos
    batch.seq_id[i][0] = seq
    batch.n_seq_id[i] = 1
    batch.logits[i] = logits


class Decoder:
    """Owns the context's KV bookkeeping and one reusable single-sequence batch."""

    def __init__(self, lib: Any, ctx: Any, n_vocab: int, n_batch: int,
                 is_eog: Callable[[int], bool]) -> None:
        self._lib = lib
        self._ctx = ctx
        self.n_vocab = n_vocab
        self.n_batch = n_batch
        self.is_eog = is_eog
        self._batch = lib.llama_batch_init(n_batch, 0, 1)
        self._greedy = lib.llama_sampler_init_greedy()
        self._memory = lib.llama_get_memory(ctx)
        self.cached: list[int] = []  # tokens whose keys/values are in the KV cache
        self.batched = 0  # how many leading cached tokens came from multi-token batches
        # Internal switch: record interventions (only the live benchmark turns it off, to
        # measure what recording costs; a refused step then does no log-softmax).
        self.record = True
        # Under `record`: the grammar's tax (engine.tax; the live benchmark turns it off
        # and on to measure its own cost: the full mask at every step and its sum).
        self.record_tax = True

    def close(self) -> None:
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_sampler_free(self._greedy)
            self._batch = None

    def clear(self) -> None:
        self._lib.llama_memory_clear(self._memory, True)
        self.cached = []
        self.batched = 0

    # -- evaluation -----------------------------------------------------------------

    def _decode(self, tokens: Sequence[int], n_past: int) -> None:
        fill_prompt(self._batch, tokens, n_past)
        code = self._lib.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise EngineError(f"llama_decode returned {code}")

    def prefill(self, tokens: Sequence[int]) -> None:
        """Bring the KV cache to `tokens`, keeping the longest reusable cached prefix.

        llama.cpp computes a one-token batch on another kernel path than a longer one
        (prompt-end logits differ by up to ~0.8 on SmolLM2), so reuse is made exact: only
        prompt tokens evaluated in batches of two or more are ever kept (never generated
        tokens, which were decoded one at a time), at least the last two prompt tokens are
        evaluated again, and no chunk is a single token. A prompt then gets the very
        logits it would get from an empty cache (tests/generate/test_live.py checks it).
        """
        keep = max(0, min(common_prefix(self.cached[: self.batched], tokens),
                          len(tokens) - 2))
        if keep > 0 and self._lib.llama_memory_seq_rm(self._memory, -1, keep, -1):
            self.cached = self.cached[:keep]
        else:
            self.clear()
            keep = 0
        for start, end in prompt_chunks(keep, len(tokens), self.n_batch):
            self._decode(tokens[start:end], start)
            self.cached.extend(tokens[start:end])
        self.batched = len(self.cached) if len(tokens) > 1 else 0

    def logits(self) -> np.ndarray:
        ptr = self._lib.llama_get_logits_ith(self._ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    # -- the loop ---------------------------------------------------------------------

    def completion(self, max_tokens: int, rule: TokenRule | None, greedy_first: bool,
                   sampling: Sampling | None) -> Completion:
        """A generation's per-sequence state under this decoder's recording switches."""
        return Completion(self.n_vocab, self.is_eog, max_tokens, rule, greedy_first,
                          sampling, self.record, self.record_tax)

    def run(self, prompt: Sequence[int], max_tokens: int, rule: TokenRule | None = None,
            greedy_first: bool = True, sampling: Sampling | None = None) -> Decoded:
        """Complete `prompt`, greedily or (`sampling`) sampled, stopping on an
        end-of-generation token."""
        gen = self.completion(max_tokens, rule, greedy_first, sampling)
        self.prefill(prompt)
        native = lambda: int(self._lib.llama_sampler_sample(self._greedy, self._ctx, -1))  # noqa: E731
        while not gen.take(gen.choose(self.logits, native)):
            self._decode((gen.tokens[-1],), len(self.cached))
            self.cached.append(gen.tokens[-1])
        return gen.result()
