"""The decode loop, as thin as llama-cpp-python's low-level API allows.

It calls `llama_decode` once per token and picks the next token greedily with llama.cpp's
native greedy sampler (no constraint) or with a `TokenRule` (greedy first, exact), or
draws it with vbw.generate.sampling's chain under the rule's mask.

How it works and why: docs/design.md, section vbw.generate.decode.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from vbw.errors import EngineError, one_line
from vbw.generate.backend import Sampling
from vbw.generate.interventions import Event, event
from vbw.generate.sampling import choose, step_noise, tax_step


class TokenRule(Protocol):
    """One generation's constraint state over token ids."""

    def allows(self, token: int) -> bool:
        """Whether `token` may come next (end-of-generation tokens included)."""

    def best(self, logits: np.ndarray) -> int:
        """The first highest-scoring allowed token (the full-vocabulary path)."""

    def accept(self, token: int) -> None:
        """Advance the state by the chosen (non end-of-generation) token."""

    # Optional (the loop uses getattr): `allowed() -> np.ndarray | None`, the boolean
    # vocabulary mask the last `best` call chose from, for the intervention's allowed mass
    # and the tax; `mask(logits) -> np.ndarray`, that mask without choosing (cheaper).


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


@dataclass(frozen=True)
class Decoded:
    tokens: list[int]
    finish_reason: Literal["stop", "length"]
    seconds: float
    ttft_seconds: float
    masked_steps: int  # steps where the rule changed the token the model would pick
    # the refused argmaxes (vbw.generate.interventions); None: no rule, or not recorded
    events: list[Event] | None = None
    tax: float | None = None  # the grammar's tax in nats (vbw.generate.sampling)


def _chunks(start: int, end: int, size: int) -> list[tuple[int, int]]:
    """[start, end) in chunks of at most `size`, the last never a lone token (unless
    the whole span is one)."""
    bounds = list(range(start, end, size)) + [end]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        bounds[-2] -= 1
    return list(zip(bounds, bounds[1:]))


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
        batch = self._batch
        n = len(tokens)
        batch.n_tokens = n
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.seq_id[i][0] = 0
            batch.n_seq_id[i] = 1
            batch.logits[i] = False
        batch.logits[n - 1] = True
        code = self._lib.llama_decode(self._ctx, batch)
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
        keep = 0
        for a, b in zip(self.cached[: self.batched], tokens):
            if a != b:
                break
            keep += 1
        keep = max(0, min(keep, len(tokens) - 2))
        if keep > 0 and self._lib.llama_memory_seq_rm(self._memory, -1, keep, -1):
            self.cached = self.cached[:keep]
        else:
            self.clear()
            keep = 0
        for start, end in _chunks(keep, len(tokens), self.n_batch):
            self._decode(tokens[start:end], start)
            self.cached.extend(tokens[start:end])
        self.batched = len(self.cached) if len(tokens) > 1 else 0

    def logits(self) -> np.ndarray:
        ptr = self._lib.llama_get_logits_ith(self._ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    # -- the loop ---------------------------------------------------------------------

    def _mask(self, rule: TokenRule, logits: np.ndarray) -> np.ndarray | None:
        """The rule's full vocabulary mask at this step (None: a rule that gives none):
        its `mask(logits)`, or what its `best` chose from."""
        direct = getattr(rule, "mask", None)
        if direct is not None:
            return direct(logits)
        mask = getattr(rule, "allowed", None)
        if mask is None:
            return None
        rule.best(logits)
        return mask()

    def _pick(self, rule: TokenRule | None, greedy_first: bool, step: Step) -> int:
        """The greedy next token. A refused argmax is appended to `step.events` (when
        recorded) with its log-probabilities: the log-softmax is computed here only, so a
        step whose argmax is allowed costs nothing more (but the tax's mask)."""
        if rule is None:
            return int(self._lib.llama_sampler_sample(self._greedy, self._ctx, -1))
        logits = self.logits()
        argmax = int(logits.argmax())
        if greedy_first and rule.allows(argmax):
            step.tax_of(logits, lambda: self._mask(rule, logits))
            return argmax
        token = int(rule.best(logits))
        step.searched += 1
        mask = getattr(rule, "allowed", None)
        allowed = mask() if mask is not None else None
        step.tax_of(logits, lambda: allowed)
        if step.events is not None and token != argmax and 0 <= token < self.n_vocab:
            step.events.append(event(step.pos, logits, argmax, token, allowed))
        return token

    def _draw(self, rule: TokenRule | None, s: Sampling, rng: np.random.Generator,
              step: Step) -> int:
        """The sampled next token (vbw.generate.sampling): the chain's draw under the
        rule's mask; where the same noise without the mask draws another token, that
        token is the one the model wanted (an intervention, as under greedy)."""
        logits = self.logits()
        noise = step_noise(rng, self.n_vocab)
        wanted = choose(logits, s, noise)
        if rule is None:
            return wanted
        allowed = self._mask(rule, logits)
        if allowed is None:
            raise EngineError("the engine's constraint gives no vocabulary mask, so it "
                              "cannot sample (decoding.temperature > 0)")
        if not allowed.any():
            raise EngineError("the constraint allows no token at this point")
        step.tax_of(logits, lambda: allowed)
        token = choose(logits, s, noise, allowed)
        if token != wanted:
            step.searched += 1
            if step.events is not None:
                step.events.append(event(step.pos, logits, wanted, token, allowed))
        return token

    @staticmethod
    def _guarded(fn: Callable[..., Any], *args: Any, n_out: int) -> Any:
        """Call into the constraint; any failure ends the generation as an EngineError
        (tokens after it would not be constrained, so the output must not be used)."""
        try:
            return fn(*args)
        except EngineError:
            raise
        except Exception as exc:
            raise EngineError(f"constraint failed after {n_out} tokens: "
                              f"{one_line(exc)}") from exc

    def run(self, prompt: Sequence[int], max_tokens: int, rule: TokenRule | None = None,
            greedy_first: bool = True, sampling: Sampling | None = None) -> Decoded:
        """Complete `prompt`, greedily or (`sampling`) sampled, stopping on an
        end-of-generation token."""
        start = time.perf_counter()
        self.prefill(prompt)
        out: list[int] = []
        finish: Literal["stop", "length"] = "length"
        ttft: float | None = None
        recorded = rule is not None and self.record
        step = Step([] if recorded else None, 0.0 if recorded and self.record_tax else None)
        rng = None if sampling is None else np.random.default_rng(sampling.seed)
        while True:
            step.pos = len(out)
            if sampling is None:
                token = self._guarded(self._pick, rule, greedy_first, step, n_out=len(out))
            else:
                token = self._guarded(self._draw, rule, sampling, rng, step, n_out=len(out))
            if ttft is None:
                ttft = time.perf_counter() - start
            if not 0 <= token < self.n_vocab:
                raise EngineError(f"constraint picked token {token} outside the vocabulary "
                                  f"after {len(out)} tokens")
            if self.is_eog(token):
                finish = "stop"
                break
            out.append(token)
            if rule is not None:
                self._guarded(rule.accept, token, n_out=len(out) - 1)
            if len(out) >= max_tokens:
                break
            self._decode((token,), len(self.cached))
            self.cached.append(token)
        seconds = time.perf_counter() - start
        return Decoded(out, finish, seconds, ttft if ttft is not None else seconds,
                       step.searched, step.events, step.tax)


@dataclass
class Step:
    """What the loop accumulates over a generation's steps: the position of the token
    being chosen, how often the rule decided it, the interventions and the tax (None:
    not recorded)."""

    events: list[Event] | None
    tax: float | None
    pos: int = 0
    searched: int = 0

    def tax_of(self, logits: np.ndarray, mask: Callable[[], np.ndarray | None]) -> None:
        """Add this step's tax (vbw.generate.sampling.tax_step), when recorded and the
        rule gives a mask; a rule without one leaves the tax unrecorded."""
        if self.tax is None:
            return
        allowed = mask()
        self.tax = None if allowed is None else self.tax + tax_step(logits, allowed)
