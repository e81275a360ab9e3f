"""Scripted stand-ins for conformance tests without a model: a tokenizer of one token per
character (token id = code point, 0 ends generation) and an engine that accepts exactly a
set of texts (its mask: the characters some accepted text continues with)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from vbw.generate.conformance.walk import Tokens
from vbw.generate.engines.base import Constraint, Engine

EOG = 0
N_VOCAB = 256


class CharTokens(Tokens):
    def __init__(self) -> None:  # no runtime: nothing to load
        self.runtime = None
        self.n_vocab = N_VOCAB
        self.eog = [EOG]
        self._bytes = {}

    def __call__(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def piece(self, token: int) -> bytes:
        return chr(token).encode("utf-8")


class TextsRule:
    def __init__(self, texts: set[str]) -> None:
        self.texts, self.prefix = texts, ""

    def allows(self, token: int) -> bool:
        if token == EOG:
            return self.prefix in self.texts
        return any(t.startswith(self.prefix + chr(token)) for t in self.texts)

    def mask(self, logits: np.ndarray) -> np.ndarray:
        return np.array([self.allows(t) for t in range(N_VOCAB)])

    def accept(self, token: int) -> None:
        self.prefix += chr(token)


class TextsConstraint(Constraint):
    def __init__(self, texts: set[str]) -> None:
        self.texts = texts

    def rule(self) -> TextsRule:
        return TextsRule(self.texts)


class TextsEngine(Engine):
    """Accepts the texts of `schema["x-texts"]` (compact JSON of each listed value, and
    with spaces under flexible whitespace); `x-sleep` seconds of compiling, `x-abort`:
    the process aborts, `x-refuse`: unsupported."""

    name = "texts"

    def _compile(self, schema: Any, key: str) -> Constraint:
        if schema.get("x-refuse"):
            raise self.unsupported("refused on purpose")
        if schema.get("x-abort"):
            os.abort()
        time.sleep(schema.get("x-sleep", 0))
        values = schema["x-texts"]
        texts = {json.dumps(v, separators=(",", ":")) for v in values}
        if self.whitespace == "flexible":
            texts |= {json.dumps(v) for v in values}
        return TextsConstraint(texts)
