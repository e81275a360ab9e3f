"""The `outlines` engine: JSON Schema -> regex -> outlines-core token index over the
GGUF's own vocabulary, walked by a guide per generation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vbw.errors import EngineError, one_line
from vbw.generate.completion import TokenRule
from vbw.generate.decode import Whitespace, best_allowed, unpack_bitmask
from vbw.generate.engines.base import ENGINES, Constraint, Engine
from vbw.generate.runtime import LIVE_EXTRA_HINT, Runtime


class OutlinesRule:
    """Walks the outlines-core guide; allowed sets come from the guide's own bitmask.

    The bitmask of a state is the same every time the state recurs, so it is unpacked
    once per (schema, state) into a boolean vocabulary mask and kept (`MaskCache`).
    """

    def __init__(self, constraint: OutlinesConstraint) -> None:
        from outlines_core import Guide

        self.guide = Guide(constraint.index)
        self.c = constraint
        self._allowed: np.ndarray | None = None

    def allows(self, token: int) -> bool:
        if token in self.c.eog:  # generation may end only where the guide is finished
            return self.guide.is_finished() or token in self.guide.get_tokens()
        return bool(self.guide.accepts_tokens([token]))

    def mask(self, logits: np.ndarray) -> np.ndarray:
        """The tokens allowed at this step, one boolean per token id."""
        self._allowed = self.c.mask(self.guide)
        return self._allowed

    def best(self, logits: np.ndarray) -> int:
        return best_allowed(self.mask(logits), logits, "outlines")

    def allowed(self) -> np.ndarray | None:
        """The mask the last `best` chose from (an intervention's allowed mass)."""
        return self._allowed

    def accept(self, token: int) -> None:
        self.guide.advance(token, False)


class MaskCache:
    """The engine's boolean vocabulary masks by (schema, guide state), least recently
    used dropped first: at most 1,024 masks of n_vocab bytes each."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._masks: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()

    def get(self, key: tuple[str, int]) -> np.ndarray | None:
        hit = self._masks.get(key)
        if hit is not None:
            self._masks.move_to_end(key)
        return hit

    def put(self, key: tuple[str, int], mask: np.ndarray) -> None:
        self._masks[key] = mask
        if len(self._masks) > self.size:
            self._masks.popitem(last=False)


class OutlinesConstraint(Constraint):
    def __init__(self, index: Any, eog_ids: Sequence[int], n_vocab: int, key: str,
                 masks: MaskCache) -> None:
        self.index = index
        self.eog = frozenset(eog_ids)
        self.eog_ids = np.asarray(sorted(self.eog), dtype=np.intp)
        self.n_vocab = n_vocab
        self.key = key
        self._words = np.zeros((n_vocab + 31) // 32, dtype=np.int32)
        self._masks = masks

    def rule(self) -> TokenRule:
        return OutlinesRule(self)

    def mask(self, guide: Any) -> np.ndarray:
        """Boolean mask of the tokens the guide allows now (end-of-generation included
        once it is finished)."""
        state = (self.key, int(guide.get_state()))
        hit = self._masks.get(state)
        if hit is not None:
            return hit
        words = self._words
        words[:] = 0
        guide.write_mask_into(words.ctypes.data, words.size, 4)
        allowed = unpack_bitmask(words, self.n_vocab)
        if guide.is_finished():
            allowed[self.eog_ids] = True
        self._masks.put(state, allowed)
        return allowed


@ENGINES.register
class OutlinesEngine(Engine):
    """JSON Schema -> regex (outlines-core) -> token index over the GGUF's own vocabulary."""

    name = "outlines"
    requires = ("outlines", "outlines-core")

    def __init__(self, runtime: Runtime, greedy_first: bool = True,
                 whitespace: Whitespace = "flexible") -> None:
        super().__init__(runtime, greedy_first, whitespace)
        self._vocabulary: Any = None
        self.eog_ids: list[int] = []
        self._masks = MaskCache()

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
            # flexible: outlines-core's own whitespace pattern, `[ ]?` at each separator
            regex = (core.json_schema.build_regex_from_schema(key, whitespace_pattern="")
                     if self.whitespace == "compact"
                     else core.json_schema.build_regex_from_schema(key))
        except Exception as exc:
            raise self.unsupported(f"schema to regex: {one_line(exc)}") from None
        vocabulary = self.vocabulary()
        try:
            index = core.Index(regex, vocabulary)
        except Exception as exc:
            raise self.unsupported(f"regex to token index: {one_line(exc)}") from None
        return OutlinesConstraint(index, self.eog_ids, self.runtime.n_vocab, key, self._masks)


def _outlines_core() -> Any:
    try:
        import outlines_core
        import outlines_core.json_schema  # noqa: F401
    except ImportError as exc:
        raise EngineError(f"outlines-core is not installed ({exc}); {LIVE_EXTRA_HINT}") from None
    return outlines_core


