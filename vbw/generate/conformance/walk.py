"""One schema under one engine: compile it, walk the engine's token mask along the model
tokenizer's tokens of each instance's text, and record whether the engine accepted it (to
the end, where generation must be allowed to stop) or at which token it cut it. The mask
is timed at every step of each instance's first text, and a step's decision there is the
mask's own; other texts ask the rule about the one token.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from vbw.errors import EngineError, UnsupportedSchema, one_line
from vbw.generate.engines.base import Constraint, Engine
from vbw.generate.runtime import Runtime
from vbw.score.conformance import Misjudged, SchemaOutcome
from vbw.task.conformance import SHOWN, Case, texts

MAX_TOKENS = 4096  # tokens of an instance's text walked at most (longer: skipped, counted)


class Walked(NamedTuple):
    """A walk's end: accepted, else the index of the refused token (None: the end)."""

    accepted: bool
    token: int | None
    mask_ns: list[int]


def _mask(rule: Any, logits: np.ndarray) -> np.ndarray:
    """The rule's boolean vocabulary mask at this step (its `mask`, else what its `best`
    chose from: the GBNF sampler's); all False where it allows nothing."""
    if hasattr(rule, "mask"):
        return rule.mask(logits)
    try:
        rule.best(logits)
    except EngineError:
        return np.zeros(logits.size, dtype=bool)
    return rule.allowed()


def walk(constraint: Constraint, tokens: Sequence[int], eog: Sequence[int], n_vocab: int,
         timed: bool) -> Walked:
    """Walk one generation's rule along `tokens`, then ask whether it may end.

    Args:
        constraint: the compiled schema.
        tokens: the instance's text as the model's tokenizer splits it.
        eog: the model's end-of-generation tokens.
        n_vocab: the vocabulary's size.
        timed: compute (and time) the full mask at each step and decide by it; else ask
            the rule about the one token (`allows`).
    Returns:
        Whether it was accepted, where it was cut, and the mask times.
    """
    rule = constraint.rule()
    logits = np.zeros(n_vocab, dtype=np.float32)
    times: list[int] = []
    for i, token in enumerate(tokens):
        if timed:
            start = time.perf_counter_ns()
            allowed = _mask(rule, logits)
            times.append(time.perf_counter_ns() - start)
            ok = bool(allowed[token])
        else:
            ok = rule.allows(token)
        if not ok:
            return Walked(False, i, times)
        rule.accept(token)
    ends = any(rule.allows(t) for t in eog)
    return Walked(ends, None if ends else len(tokens), times)


def _cut_to(reason: str, most: int = 300) -> str:
    """A refusal's reason, at most `most` characters (an engine may quote the schema)."""
    return reason if len(reason) <= most else reason[:most] + "…"


class Tokens:
    """The model's tokenizer as conformance uses it: text -> tokens, token -> its bytes."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.n_vocab = runtime.n_vocab
        self.eog = [t for t in range(runtime.n_vocab) if runtime.is_eog(t)]
        self._bytes: dict[int, bytes] = {}

    def __call__(self, text: str) -> list[int]:
        return self.runtime.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def piece(self, token: int) -> bytes:
        if token not in self._bytes:
            self._bytes[token] = self.runtime.token_bytes(token)
        return self._bytes[token]

    def char_at(self, tokens: Sequence[int], index: int) -> int:
        """The character offset where token `index` starts."""
        head = b"".join(self.piece(t) for t in tokens[:index])
        return len(head.decode("utf-8", errors="replace"))


def check_case(engine: Engine, case: Case, tok: Tokens, timed: bool = True,
               reference: Engine | None = None
               ) -> tuple[SchemaOutcome, np.ndarray, list[Misjudged]]:
    """One schema under one engine, in this process: compile, then walk every instance's
    texts (compact only under compact whitespace).

    Args:
        engine: the engine (its whitespace decides the texts walked).
        case: the schema and its instances.
        tok: the model's tokenizer.
        timed: time the mask on each instance's first text (else no mask is computed).
        reference: the engine whose cut names the token where an invalid instance the
            engine accepted went wrong (llguidance: sound on every suite schema it
            compiles); None: no token is named for those.
    Returns:
        The outcome, the timed mask steps (ns) and the instances judged wrongly.
    """
    try:
        constraint, seconds = engine.compile(case.schema)
    except UnsupportedSchema as e:
        return (SchemaOutcome(schema_id=case.id, category=case.category, compiled=False,
                              reason=_cut_to(str(e))), np.zeros(0, np.int64), [])
    except Exception as e:  # noqa: BLE001 - an engine's own failure is this schema's outcome
        return (SchemaOutcome(schema_id=case.id, category=case.category, compiled=False,
                              reason=_cut_to(f"engine {engine.name} failed: {one_line(e)}")),
                np.zeros(0, np.int64), [])
    out = SchemaOutcome(schema_id=case.id, category=case.category, compiled=True,
                        compile_seconds=round(seconds, 6))
    times: list[int] = []
    wrong: list[Misjudged] = []
    for inst in case.instances:
        for n, (how, text) in enumerate(texts(inst.value, case.schema).items()):
            if engine.whitespace == "compact" and how != "compact":
                continue
            tokens = tok(text)
            if len(tokens) > MAX_TOKENS:
                out.skipped += 1
                continue
            try:
                w = walk(constraint, tokens, tok.eog, tok.n_vocab, timed=timed and n == 0)
            except EngineError as e:  # the engine's state broke: it cannot accept this
                w = Walked(False, None, [])
                out.reason = out.reason or one_line(e)
            times += w.mask_ns
            field = ("valid_" if inst.valid else "invalid_") + \
                ("accepted" if w.accepted else "rejected")
            setattr(out, field, getattr(out, field) + 1)
            if w.accepted != inst.valid:
                cut = (engine.name, w) if not w.accepted else _cut(reference, case, tokens, tok)
                wrong.append(_misjudged(case, inst, how, text, tokens, w.accepted, cut, tok))
    return out, np.asarray(times, dtype=np.int64), wrong


def _cut(reference: Engine | None, case: Case, tokens: Sequence[int], tok: Tokens
         ) -> tuple[str, Walked] | None:
    """Where `reference` cuts the instance's tokens (None: it cannot say)."""
    if reference is None:
        return None
    try:
        constraint, _ = reference.compile(case.schema)
        w = walk(constraint, tokens, tok.eog, tok.n_vocab, timed=False)
    except Exception:  # noqa: BLE001 - evidence only: no token is named
        return None
    return None if w.accepted else (reference.name, w)


def _misjudged(case: Case, inst: Any, how: str, text: str, tokens: Sequence[int],
               accepted: bool, cut: tuple[str, Walked] | None, tok: Tokens) -> Misjudged:
    w = cut[1] if cut is not None else None
    at = w.token if w is not None and w.token is not None and w.token < len(tokens) else None
    return Misjudged(
        kind="accepted invalid" if accepted else "rejected valid", schema_id=case.id,
        category=case.category, instance=inst.label, keyword=inst.keyword,
        serialisation=how, text=text if len(text) <= SHOWN else text[:SHOWN] + "…",
        token=at, char=None if at is None else tok.char_at(tokens, at),
        piece=None if at is None else tok.piece(tokens[at]).decode("utf-8", "replace"),
        cut_by=None if cut is None else cut[0], items=list(inst.items))
