"""The `llamacpp` engine: JSON Schema -> GBNF (llama-cpp-python's converter) -> llama.cpp's
own grammar sampler, asked one token at a time (vbw.generate.decode's greedy first).
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from vbw.errors import EngineError, UnsupportedSchema, one_line
from vbw.generate.completion import TokenRule
from vbw.generate.engines.base import ENGINES, Constraint, Engine
from vbw.generate.runtime import Runtime


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


SPACE_RULE = re.compile(r"^space ::= .*$", re.MULTILINE)


def compact_gbnf(gbnf: str) -> str:
    """The converter has no whitespace option: every separator refers to its `space`
    rule (`" "?` in llama-cpp-python 0.3), which compact redefines as empty."""
    if len(SPACE_RULE.findall(gbnf)) != 1:
        raise UnsupportedSchema("engine llamacpp cannot compile the schema: no single "
                                "`space` rule in the GBNF to make compact")
    return SPACE_RULE.sub('space ::= ""', gbnf)


class Candidates:
    """llama.cpp `llama_token_data_array`s the grammar sampler filters in place: one of
    a single token (is it allowed?) and one of the whole vocabulary (which are?)."""

    def __init__(self, lib: Any, n_vocab: int) -> None:
        self._lib = lib
        self.n_vocab = n_vocab
        self._all = (lib.llama_token_data * n_vocab)()
        self.view = np.ctypeslib.as_array(self._all)  # fields id, logit, p
        self.view["id"] = np.arange(n_vocab)
        self.all = lib.llama_token_data_array(self._all, n_vocab, -1, False)
        self._one = (lib.llama_token_data * 1)()
        self.one = lib.llama_token_data_array(self._one, 1, -1, False)

    def allows(self, sampler: Any, token: int) -> bool:
        cell = self._one[0]
        cell.id, cell.logit, cell.p = token, 0.0, 0.0
        self.one.size, self.one.selected = 1, -1
        self._lib.llama_sampler_apply(sampler, ctypes.byref(self.one))
        return bool(cell.logit != -math.inf)

    def best(self, sampler: Any, logits: np.ndarray) -> int:
        view = self.view
        view["id"] = np.arange(self.n_vocab)  # a sampler may reorder; restore id order
        view["logit"] = logits
        self.all.size, self.all.selected, self.all.sorted = self.n_vocab, -1, False
        self._lib.llama_sampler_apply(sampler, ctypes.byref(self.all))
        scored = view["logit"][: self.all.size]
        best = int(scored.argmax())
        if scored[best] == -math.inf:
            raise EngineError("the GBNF grammar allows no token at this point")
        return int(view["id"][best])

    def allowed(self) -> np.ndarray:
        """The tokens the last `best` left finite (the grammar sets the others to -inf),
        as one boolean per token id."""
        n = self.all.size
        kept = self.view[:n]
        mask = np.zeros(self.n_vocab, dtype=bool)
        mask[kept["id"][kept["logit"] != -math.inf]] = True
        return mask


class GrammarRule:
    """One generation's llama.cpp grammar sampler (created per generation, as
    llama-cpp-python did, so no state is shared between generations)."""

    def __init__(self, runtime: Runtime, gbnf: bytes, candidates: Candidates) -> None:
        self._lib = runtime._lib
        self.sampler = self._lib.llama_sampler_init_grammar(runtime.vocab, gbnf, b"root")
        if not self.sampler:
            raise EngineError("llama.cpp could not build the grammar sampler")
        self.candidates = candidates

    def __del__(self) -> None:
        if getattr(self, "sampler", None):
            self._lib.llama_sampler_free(self.sampler)
            self.sampler = None

    def allows(self, token: int) -> bool:
        return self.candidates.allows(self.sampler, token)

    def best(self, logits: np.ndarray) -> int:
        return self.candidates.best(self.sampler, logits)

    def allowed(self) -> np.ndarray:
        """The mask the last `best` chose from (an intervention's allowed mass); the
        candidates are shared, so it is only valid until the next rule's `best`."""
        return self.candidates.allowed()

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self.sampler, token)


class GrammarConstraint(Constraint):
    def __init__(self, runtime: Runtime, gbnf: str, candidates: Candidates) -> None:
        self.runtime = runtime
        self.gbnf = gbnf.encode("utf-8")
        self.candidates = candidates

    def rule(self) -> TokenRule:
        return GrammarRule(self.runtime, self.gbnf, self.candidates)


@ENGINES.register
class LlamaCppEngine(Engine):
    """JSON Schema -> GBNF (llama-cpp-python's converter) -> llama.cpp grammar sampler."""

    name = "llamacpp"
    requires = ()
    _candidates: Candidates | None = None

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        from llama_cpp.llama_grammar import json_schema_to_gbnf

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
        if self.whitespace == "compact":
            gbnf = compact_gbnf(gbnf)
        self._check_parses(gbnf)
        if self._candidates is None:
            self._candidates = Candidates(self.runtime._lib, self.runtime.n_vocab)
        return GrammarConstraint(self.runtime, gbnf, self._candidates)

    def _check_parses(self, gbnf: str) -> None:
        """Parse the grammar in llama.cpp now; a bad grammar at decode time is a NULL sampler."""
        if not self.runtime.grammar_parses(gbnf):
            raise self.unsupported("llama.cpp rejected the generated GBNF grammar")


