"""The `llguidance` engine: JSON Schema -> llguidance grammar -> a matcher per generation.

llguidance is the constraint library llama.cpp, vLLM and SGLang integrate. Unlike the
GBNF converter it keeps every object's own property order (an optional property may
precede a required one) and enforces `minimum`/`maximum`; a schema it cannot express is
refused at compile time with its own reason (`lenient` is off, so an unknown keyword is
a refusal, never silently ignored). Its tokenizer is built once from the GGUF's own
vocabulary, with all of the model's end-of-generation tokens as ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from vbw.errors import EngineError
from vbw.generate.completion import TokenRule
from vbw.generate.decode import Whitespace, best_allowed, unpack_bitmask
from vbw.generate.engines.base import ENGINES, Constraint, Engine
from vbw.generate.runtime import LIVE_EXTRA_HINT, Runtime


def _llguidance() -> Any:
    try:
        import llguidance
        import llguidance.llamacpp  # noqa: F401
    except ImportError as exc:
        raise EngineError(f"llguidance is not installed ({exc}); {LIVE_EXTRA_HINT}") from None
    return llguidance


class LLGuidanceRule:
    """One generation's matcher; the full mask is computed only when the argmax is refused."""

    def __init__(self, constraint: LLGuidanceConstraint) -> None:
        self.c = constraint
        self.matcher = _llguidance().LLMatcher(constraint.tokenizer, constraint.grammar,
                                               log_level=0)
        self._words = np.zeros((constraint.n_vocab + 31) // 32, dtype=np.int32)
        self._allowed: np.ndarray | None = None

    def allows(self, token: int) -> bool:
        if token in self.c.eog:
            return bool(self.matcher.is_accepting())
        return self.matcher.validate_tokens([token]) == 1

    def mask(self, logits: np.ndarray) -> np.ndarray:
        """The tokens allowed at this step, one boolean per token id."""
        words = self._words
        self.matcher.unsafe_compute_mask_ptr(words.ctypes.data, words.nbytes)
        self._check()
        allowed = unpack_bitmask(words, self.c.n_vocab)
        allowed[self.c.eog_ids] = bool(self.matcher.is_accepting())
        self._allowed = allowed
        return allowed

    def best(self, logits: np.ndarray) -> int:
        return best_allowed(self.mask(logits), logits, "llguidance")

    def allowed(self) -> np.ndarray | None:
        """The mask the last `best` chose from (an intervention's allowed mass)."""
        return self._allowed

    def accept(self, token: int) -> None:
        self.matcher.consume_token(token)
        self._check()

    def _check(self) -> None:
        if self.matcher.is_error():
            raise EngineError(f"llguidance matcher: {self.matcher.get_error()}")


class LLGuidanceConstraint(Constraint):
    def __init__(self, tokenizer: Any, grammar: str, eog_ids: list[int], n_vocab: int) -> None:
        self.tokenizer = tokenizer
        self.grammar = grammar
        self.eog = frozenset(eog_ids)
        self.eog_ids = np.asarray(sorted(self.eog), dtype=np.intp)
        self.n_vocab = n_vocab

    def rule(self) -> TokenRule:
        return LLGuidanceRule(self)


@ENGINES.register
class LLGuidanceEngine(Engine):
    """JSON Schema -> llguidance grammar over the GGUF's vocabulary."""

    name = "llguidance"
    requires = ("llguidance",)

    def __init__(self, runtime: Runtime, greedy_first: bool = True,
                 whitespace: Whitespace = "flexible") -> None:
        super().__init__(runtime, greedy_first, whitespace)
        self._tokenizer: Any = None
        self.eog_ids: list[int] = []

    def vocabulary(self) -> Any:
        """The llguidance tokenizer, built once per engine from the GGUF vocabulary."""
        if self._tokenizer is None:
            rt = self.runtime
            self.eog_ids = [t for t in range(rt.n_vocab) if rt.is_eog(t)]
            self._tokenizer = _llguidance().llamacpp.lltokenizer_from_vocab(
                rt.vocab, eos_token=self.eog_ids)
        return self._tokenizer

    def _compile(self, schema: Mapping[str, Any], key: str) -> Constraint:
        llg = _llguidance()
        # flexible: llguidance's own, any JSON whitespace ([ \t\n\r]+) between tokens
        options = {"whitespace_flexible": self.whitespace == "flexible", "lenient": False}
        try:
            grammar = llg.LLMatcher.grammar_from_json_schema(key, defaults=options)
        except ValueError as exc:
            raise self.unsupported(f"schema to grammar: {exc}") from None
        tokenizer = self.vocabulary()
        is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(grammar, tokenizer)
        if is_error:
            raise self.unsupported(messages[0] if messages else "grammar rejected")
        return LLGuidanceConstraint(tokenizer, grammar, self.eog_ids, self.runtime.n_vocab)
