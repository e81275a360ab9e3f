"""Where the grammar bit: the decode loop's record of every step whose argmax was refused.

The greedy-first loop (vbw.generate.decode) already asks the constraint about the model's
own choice at every step; when the rule refuses it, the loop searches the allowed set, and
that step is an *intervention*. Recording it costs a log-softmax over the vocabulary, so it
is computed ONLY at refused steps: a step whose argmax is allowed does no extra work at all.

How it works and why: docs/design.md, section vbw.generate.interventions.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vbw.replay.format import Intervention


@dataclass(frozen=True)
class Event:
    """One refused argmax as the loop sees it (token ids, no text yet)."""

    pos: int  # index of the forced token among the output tokens
    wanted_id: int
    forced_id: int
    lp_wanted: float
    lp_forced: float
    allowed_mass: float | None


def log_probs(logits: np.ndarray, ids: Sequence[int],
              allowed: np.ndarray | None = None) -> tuple[list[float], float | None]:
    """Log-probabilities of `ids` under softmax(logits), and the probability mass of the
    `allowed` tokens (None without a mask), in float64 from the float32 logits."""
    e = logits.astype(np.float64)  # one copy, then everything in place (~0.3 ms idle)
    top = float(e.max())
    e -= top
    np.exp(e, out=e)
    total = float(e.sum())
    log_norm = top + float(np.log(total))  # log of the partition function
    lps = [float(logits[i]) - log_norm for i in ids]
    mass = None
    if allowed is not None:  # a multiply into the buffer: boolean indexing is ~5x slower
        mass = min(1.0, float(np.multiply(e, allowed, out=e).sum()) / total)
    return lps, mass


def event(pos: int, logits: np.ndarray, wanted: int, forced: int,
          allowed: np.ndarray | None) -> Event:
    (lp_w, lp_f), mass = log_probs(logits, (wanted, forced), allowed)
    return Event(pos, wanted, forced, lp_w, lp_f, mass)


def _chars(data: bytes) -> int:
    """Characters decoded from `data`, an unfinished trailing UTF-8 sequence not counted
    (invalid bytes count as the U+FFFD they decode to)."""
    return len(codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False))


def to_interventions(events: Sequence[Event], tokens: Sequence[int],
                     piece: Callable[[int], bytes],
                     is_eog: Callable[[int], bool]) -> list[Intervention]:
    """The replay's interventions of one output: token texts and character offsets.

    `piece(token)` is the bytes the token appends to the output (b"" for a special
    token), `tokens` the output's tokens (an end-of-generation token not included). A
    token that is part of a UTF-8 sequence shows as U+FFFD in `wanted`/`forced`. The
    replay keeps log-probabilities to 4 decimals (rounding keeps lp_wanted >= lp_forced)
    and the allowed mass to 4 significant digits."""
    out: list[Intervention] = []
    if not events:
        return out
    offsets = np.cumsum([0] + [len(piece(t)) for t in tokens])
    data = b"".join(piece(t) for t in tokens)

    def text(token: int) -> str:
        return "" if is_eog(token) else piece(token).decode("utf-8", errors="replace")

    for ev in events:
        char = _chars(data[: int(offsets[min(ev.pos, len(tokens))])])
        mass = None if ev.allowed_mass is None else float(f"{ev.allowed_mass:.4g}")
        out.append(Intervention(pos=ev.pos, char=char, wanted=text(ev.wanted_id),
                                forced=text(ev.forced_id), lp_wanted=round(ev.lp_wanted, 4),
                                lp_forced=round(ev.lp_forced, 4), allowed_mass=mass,
                                wanted_id=ev.wanted_id, forced_id=ev.forced_id))
    return out
