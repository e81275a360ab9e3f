"""One generation's state, whichever loop decodes it: vbw.generate.decode's one
sequence at a time, or vbw.generate.batched's several sequences in one llama.cpp decode.

It picks each next token greedily (a `TokenRule` first, exact) or draws it with
vbw.generate.sampling's chain under the rule's mask, and records the interventions and
the grammar's tax, so a sequence's record is the same whichever loop decoded it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
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


class Completion:
    """One generation's state, whichever loop decodes it (vbw.generate.decode's one
    sequence, or vbw.generate.batched's several in one batch): its rule, sampler and seed,
    output, interventions and tax, and the clock from its start."""

    def __init__(self, n_vocab: int, is_eog: Callable[[int], bool], max_tokens: int,
                 rule: TokenRule | None, greedy_first: bool, sampling: Sampling | None,
                 record: bool = True, record_tax: bool = True) -> None:
        self.start = time.perf_counter()
        self.n_vocab = n_vocab
        self.is_eog = is_eog
        self.max_tokens = max_tokens
        self.rule = rule
        self.greedy_first = greedy_first
        self.sampling = sampling
        self.rng = None if sampling is None else np.random.default_rng(sampling.seed)
        recorded = rule is not None and record
        self.step = Step([] if recorded else None, 0.0 if recorded and record_tax else None)
        self.tokens: list[int] = []
        self.finish: Literal["stop", "length"] = "length"
        self.ttft: float | None = None
        self.done_at: float | None = None

    def choose(self, logits: Callable[[], np.ndarray],
               native: Callable[[], int] | None = None) -> int:
        """The next token from this step's `logits` (read only when needed); `native`:
        llama.cpp's own greedy pick for an unconstrained greedy step (else the argmax)."""
        self.step.pos = n_out = len(self.tokens)
        if self.sampling is None:
            token = _guarded(self._pick, logits, native, n_out=n_out)
        else:
            token = _guarded(self._draw, logits(), n_out=n_out)
        if self.ttft is None:
            self.ttft = time.perf_counter() - self.start
        if not 0 <= token < self.n_vocab:
            raise EngineError(f"constraint picked token {token} outside the vocabulary "
                              f"after {n_out} tokens")
        return token

    def take(self, token: int) -> bool:
        """Append the chosen token (the rule advances); True when the generation is over
        (an end-of-generation token, or the cap)."""
        if self.is_eog(token):
            self.finish = "stop"
        else:
            self.tokens.append(token)
            if self.rule is not None:
                _guarded(self.rule.accept, token, n_out=len(self.tokens) - 1)
            if len(self.tokens) < self.max_tokens:
                return False
        self.done_at = time.perf_counter()
        return True

    def result(self) -> Decoded:
        seconds = (self.done_at or time.perf_counter()) - self.start
        step = self.step
        return Decoded(self.tokens, self.finish, seconds,
                       self.ttft if self.ttft is not None else seconds,
                       step.searched, step.events, step.tax)

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

    def _pick(self, read: Callable[[], np.ndarray], native: Callable[[], int] | None) -> int:
        """The greedy next token. A refused argmax is appended to `step.events` (when
        recorded) with its log-probabilities: the log-softmax is computed here only, so a
        step whose argmax is allowed costs nothing more (but the tax's mask)."""
        rule, step = self.rule, self.step
        if rule is None:
            return native() if native is not None else int(read().argmax())
        logits = read()
        argmax = int(logits.argmax())
        if self.greedy_first and rule.allows(argmax):
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

    def _draw(self, logits: np.ndarray) -> int:
        """The sampled next token (vbw.generate.sampling): the chain's draw under the
        rule's mask; where the same noise without the mask draws another token, that
        token is the one the model wanted (an intervention, as under greedy)."""
        rule, step, s = self.rule, self.step, self.sampling
        assert s is not None and self.rng is not None
        noise = step_noise(self.rng, self.n_vocab)
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
