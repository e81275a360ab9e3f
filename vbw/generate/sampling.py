"""Sampled decoding: one sampler chain for every arm, the grammar's mask applied first
(llama.cpp's order: top_k, top_p, min_p, temperature, then a Gumbel-max draw), each
sample's seed derived from (seed, item, arm, index); and the grammar's tax, -log of the
probability mass the mask left under the model's own distribution, per step.

How it works and why: docs/design.md, section vbw.generate.sampling.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from vbw.config import DecodingConfig
from vbw.generate.backend import Sampling

# The chain as the replay header records it (generation-deciding: merge refuses a mix).
CHAIN = "mask,top_k,top_p,min_p,temperature,gumbel-max"


def sample_seed(seed: int, item_id: str, arm: str, index: int) -> int:
    """The seed of one sample: a 31-bit integer from sha256 over (seed, item id, arm key,
    sample index), the same in every process (str hashes are salted) and small enough for
    every server's `seed` field.

    Args:
        seed: the run's `decoding.seed`.
        item_id: the item's id.
        arm: the arm key (e.g. constrained[answer]).
        index: the sample's index, 0 .. samples - 1.
    Returns:
        An integer in [0, 2**31).
    """
    text = f"{seed}\x00{item_id}\x00{arm}\x00{index}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big") & 0x7FFFFFFF


def request_sampling(decoding: DecodingConfig, item_id: str, arm: str,
                     index: int) -> Sampling | None:
    """One request's sampler for sample `index` of `arm` on the item (None: greedy).

    Args:
        decoding: the run's decoding settings.
        item_id: the item's id.
        arm: the arm key whose sample this is.
        index: the sample's index.
    Returns:
        The settings with this sample's own seed, or None at temperature 0.
    """
    if decoding.greedy:
        return None
    return Sampling(temperature=decoding.temperature, top_k=decoding.top_k,
                    top_p=decoding.top_p, min_p=decoding.min_p,
                    seed=sample_seed(decoding.seed, item_id, arm, index))


def _truncated(logits: np.ndarray, s: Sampling) -> np.ndarray:
    """The logits with every token the truncations drop (and the masked ones, already
    -inf) set to -inf; a new array."""
    x = logits.astype(np.float64)
    finite = np.isfinite(x)
    n = int(finite.sum())
    if s.top_k and s.top_k < n:
        kth = np.partition(x[finite], n - s.top_k)[n - s.top_k]
        x[x < kth] = -np.inf  # ties at the k-th value are all kept
    if s.top_p < 1.0 or s.min_p > 0.0:
        top = float(x.max())
        p = np.exp(x - top)
        p /= p.sum()
        if s.top_p < 1.0:
            order = np.argsort(-p, kind="stable")
            cum = np.cumsum(p[order])
            keep = int(np.searchsorted(cum, s.top_p)) + 1  # the token that crosses top_p stays
            x[order[keep:]] = -np.inf
        if s.min_p > 0.0:
            x[p < s.min_p * float(p.max())] = -np.inf
    return x


def choose(logits: np.ndarray, s: Sampling, noise: np.ndarray,
           mask: np.ndarray | None = None) -> int:
    """The token the chain draws with `noise` (-log of Exp(1) draws, one per token) from
    `logits`, restricted to `mask` when given (the mask is applied before the chain).

    Args:
        logits: the model's logits at this step (float32, one per token id).
        s: the sampler settings (temperature > 0).
        noise: this step's noise vector, shared by the masked and the unmasked choice.
        mask: the tokens the grammar allows, or None.
    Returns:
        The token id drawn.
    """
    x = logits if mask is None else np.where(mask, logits, -np.inf)
    if s.top_k or s.top_p < 1.0 or s.min_p > 0.0:
        x = _truncated(x, s)
    return int(np.argmax(x / s.temperature + noise))


def step_noise(rng: np.random.Generator, n_vocab: int) -> np.ndarray:
    """One step's Gumbel noise as -log(Exp(1)) draws, in float64: a float32 exponential
    is exactly 0 about once in 10^7 draws (a few steps in a thousand over a 49k vocabulary),
    whose noise +inf would draw that token whatever its probability (and, masked, a NaN);
    float64 draws are never 0 in practice and are no slower to make."""
    e = rng.standard_exponential(n_vocab)
    np.log(e, out=e)
    return np.negative(e, out=e)


def _logsumexp(x: np.ndarray) -> float:
    top = float(x.max())
    return top + math.log(float(np.exp(x - top).sum()))


def tax_step(logits: np.ndarray, mask: np.ndarray) -> float:
    """-log of the probability mass `mask` leaves under softmax(logits): 0.0 exactly when
    no token with mass (in float32) is masked out (both sums then add the same numbers);
    inf when the mask allows no token. float32 exponentials summed in float64; a kept
    mass that underflows float32 is recomputed in log space in float64."""
    e = np.subtract(logits, logits.max(), dtype=np.float32)
    np.exp(e, out=e)
    e64 = e.astype(np.float64)
    total = float(e64.sum())
    kept = float(np.multiply(e64, mask, out=e64).sum())  # a multiply: indexing is ~5x slower
    if kept > 0.0:
        return math.log(total / kept)
    if not mask.any():
        return math.inf
    x = logits.astype(np.float64)
    return _logsumexp(x) - _logsumexp(x[mask])
