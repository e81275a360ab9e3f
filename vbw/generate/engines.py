"""Constraint engines: turn a JSON Schema into a token mask for the in-process `Runtime`.

`outlines` compiles the schema to a regex and an outlines-core token index, applied as
a logits processor; `llamacpp` converts it to a GBNF grammar run by llama.cpp's own
grammar sampler. Property order is part of the schema's contract, so nothing here ever
sorts keys: the schema's own order is the order the output must follow.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vbw.errors import ConfigError, EngineError, UnsupportedSchema, one_line
from vbw.generate.runtime import LIVE_EXTRA_HINT, Runtime
from vbw.task.schemas import schema_key



class Constraint:
    """A compiled schema; `decode_kwargs()` gives Runtime.complete's constraint arguments.

    Each call must return fresh per-generation state (a new guide/processor).
    """

    def decode_kwargs(self) -> dict[str, Any]:
        return {}


class Engine:
    """Base: a per-schema compile cache; the in-process backend (vbw.generate.local)
    decodes with the constraint's `decode_kwargs()`."""

    name: ClassVar[str] = "none"

    def __init__(self, runtime: Runtime, greedy_first: bool = True) -> None:
        self.runtime = runtime
        self.greedy_first = greedy_first  # the exact greedy shortcut, where the engine has one
        self._cache: dict[str, Constraint | UnsupportedSchema] = {}

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        raise NotImplementedError

    def compile(self, schema: Mapping[str, Any]) -> tuple[Constraint, float]:
        """Compile (or fetch from cache) a schema; returns (constraint, seconds spent now).

        Seconds are 0.0 on a cache hit. Raises UnsupportedSchema, also on a cached failure.
        """
        key = schema_key(schema)
        hit = self._cache.get(key)
        if isinstance(hit, UnsupportedSchema):
            raise hit
        if hit is not None:
            return hit, 0.0
        start = time.perf_counter()
        try:
            constraint = self._compile(schema, key)
        except UnsupportedSchema as exc:
            self._cache[key] = exc
            raise
        seconds = time.perf_counter() - start
        self._cache[key] = constraint
        return constraint, seconds

    def unsupported(self, reason: str) -> UnsupportedSchema:
        return UnsupportedSchema(f"engine {self.name} cannot compile the schema: {reason}")


# -- outlines ---------------------------------------------------------------------


class OutlinesProcessor:
    """Masks every token the outlines-core guide does not allow at the current state.

    llama-cpp-python passes the whole token history; the first call fixes where the
    prompt ends and later calls advance the guide by the tokens sampled since.

    Greedy first (exact): decoding is greedy, so when the guide accepts the unconstrained
    argmax, the argmax of the allowed tokens IS that token, and the scores go back
    unchanged with no full-vocabulary work. Only when the guide refuses it (or it ends
    the generation, whose rule is the guide being finished) is the vocabulary masked.
    """

    def __init__(self, index: Any, eog_ids: Sequence[int], greedy_first: bool = True) -> None:
        from outlines_core import Guide

        self.guide = Guide(index)
        self.eog_ids = list(eog_ids)
        self.eog = set(self.eog_ids)
        self.greedy_first = greedy_first
        self.start: int | None = None
        self.consumed = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if self.start is None:
            self.start = len(input_ids)
        for token in input_ids[self.start + self.consumed :]:
            self.guide.advance(int(token), False)
            self.consumed += 1
        if self.greedy_first:
            best = int(np.argmax(scores))
            if best not in self.eog and self.guide.accepts_tokens([best]):
                return scores
        allowed = np.asarray(self.guide.get_tokens(), dtype=np.intp)
        if self.guide.is_finished():
            allowed = np.concatenate([allowed, np.asarray(self.eog_ids, dtype=np.intp)])
        allowed = allowed[allowed < scores.shape[-1]]
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked


class OutlinesConstraint(Constraint):
    def __init__(self, index: Any, eog_ids: Sequence[int], greedy_first: bool) -> None:
        self.index = index
        self.eog_ids = eog_ids
        self.greedy_first = greedy_first

    def decode_kwargs(self) -> dict[str, Any]:
        return {"logits_processor": OutlinesProcessor(self.index, self.eog_ids,
                                                      self.greedy_first)}


class OutlinesEngine(Engine):
    """JSON Schema -> regex (outlines-core) -> token index over the GGUF's own vocabulary."""

    name = "outlines"

    def __init__(self, runtime: Runtime, greedy_first: bool = True) -> None:
        super().__init__(runtime, greedy_first)
        self._vocabulary: Any = None
        self.eog_ids: list[int] = []

    def vocabulary(self) -> Any:
        """Build outlines_core.Vocabulary once from the model's token bytes.

        Keys are the exact bytes llama.cpp appends for each token, so the index matches
        what detokenising produces. Control/special tokens (empty pieces) are left out;
        the end-of-generation tokens are allowed by the processor once the guide is done.
        """
        if self._vocabulary is None:
            Vocabulary = _outlines_core().Vocabulary
            rt = self.runtime
            pieces: dict[bytes, list[int]] = {}
            for token in range(rt.n_vocab):
                if rt.is_eog(token):
                    self.eog_ids.append(token)
                    continue
                piece = rt.token_bytes(token)
                if piece:
                    pieces.setdefault(piece, []).append(token)
            eos = rt.eos_id if rt.eos_id >= 0 else self.eog_ids[0]
            self._vocabulary = Vocabulary(eos, pieces)
        return self._vocabulary

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        core = _outlines_core()
        try:
            regex = core.json_schema.build_regex_from_schema(key)
        except Exception as exc:
            raise self.unsupported(f"schema to regex: {one_line(exc)}") from None
        vocabulary = self.vocabulary()
        try:
            index = core.Index(regex, vocabulary)
        except Exception as exc:
            raise self.unsupported(f"regex to token index: {one_line(exc)}") from None
        return OutlinesConstraint(index, self.eog_ids, self.greedy_first)


def _outlines_core() -> Any:
    try:
        import outlines_core
        import outlines_core.json_schema  # noqa: F401
    except ImportError as exc:
        raise EngineError(f"outlines-core is not installed ({exc}); {LIVE_EXTRA_HINT}") from None
    return outlines_core


# -- llama.cpp GBNF -----------------------------------------------------------------


def _order_conflicts(node: Any, path: str = "$") -> list[str]:
    """Objects where an optional property precedes a required one.

    llama.cpp's converter always emits required properties before optional ones, so for
    such a schema the grammar would force an order the schema does not have.
    """
    found: list[str] = []
    if isinstance(node, Mapping):
        props = node.get("properties")
        if isinstance(props, Mapping):
            required = set(node.get("required", []))
            seen_optional = False
            for name in props:
                if name not in required:
                    seen_optional = True
                elif seen_optional:
                    found.append(f"{path}.{name}")
                    break
        for k, v in node.items():
            found.extend(_order_conflicts(v, f"{path}.{k}"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found.extend(_order_conflicts(v, f"{path}[{i}]"))
    return found


class GrammarConstraint(Constraint):
    def __init__(self, grammar: Any) -> None:
        self.grammar = grammar

    def decode_kwargs(self) -> dict[str, Any]:
        # llama-cpp-python builds a fresh grammar sampler per generate(): no shared state.
        return {"grammar": self.grammar}


class LlamaCppEngine(Engine):
    """JSON Schema -> GBNF (llama-cpp-python's converter) -> llama.cpp grammar sampler."""

    name = "llamacpp"

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

        conflicts = _order_conflicts(schema)
        if conflicts:
            raise self.unsupported(
                f"required property {conflicts[0]} follows an optional one; the GBNF "
                "converter emits required properties first, so the order cannot be kept"
            )
        try:
            # No prop_order on purpose: it is one global name->rank map applied to every
            # nested object, while the converter's stable sort already keeps each
            # object's own order when it is empty.
            gbnf = json_schema_to_gbnf(key)
        except Exception as exc:
            raise self.unsupported(f"schema to GBNF: {one_line(exc)}") from None
        self._check_parses(gbnf)
        return GrammarConstraint(LlamaGrammar.from_string(gbnf, verbose=False))

    def _check_parses(self, gbnf: str) -> None:
        """Parse the grammar in llama.cpp now; a bad grammar at decode time is a NULL sampler."""
        if not self.runtime.grammar_parses(gbnf):
            raise self.unsupported("llama.cpp rejected the generated GBNF grammar")


ENGINES: dict[str, type[Engine]] = {"outlines": OutlinesEngine, "llamacpp": LlamaCppEngine}


def make_engine(name: str, runtime: Runtime, greedy_first: bool = True) -> Engine:
    """Build a constraint engine by name on a shared runtime."""
    try:
        cls = ENGINES[name]
    except KeyError:
        raise ConfigError(
            f"unknown engine {name!r}; valid engines: {', '.join(ENGINES)}"
        ) from None
    return cls(runtime, greedy_first)
