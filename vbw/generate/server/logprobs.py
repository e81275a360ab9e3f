"""Interventions from a server's per-token log-probabilities, where they can be trusted.

A server can tell where its grammar overrode the model only if the log-probabilities it
returns are those of the model BEFORE the constraint: then a step whose most probable
token is not the token generated (greedy decoding) is a refused argmax. Which servers do
is each dialect's `logprobs_before_constraint` (vbw.generate.dialects); the others record
no interventions (the field stays absent: "not recorded for this backend").

How it works and why: docs/design.md, section vbw.generate.server.logprobs.
"""

from __future__ import annotations

import math
from typing import Any

from vbw.replay.format import Intervention


def _entry(obj: Any) -> tuple[str, float] | None:
    if not isinstance(obj, dict):
        return None
    token, lp = obj.get("token"), obj.get("logprob")
    if not isinstance(token, str) or type(lp) not in (int, float) or not math.isfinite(lp):
        return None
    return token, float(lp)


def interventions(entries: list[Any] | None, text: str) -> list[Intervention] | None:
    """The steps where the server's top token is not the one generated, or None when the
    entries cannot be trusted to say (absent, malformed, or not joining up to `text`)."""
    if entries is None:
        return None
    steps: list[tuple[str, float, str, float]] = []
    for obj in entries:
        chosen = _entry(obj)
        tops = obj.get("top_logprobs") if isinstance(obj, dict) else None
        if chosen is None or not isinstance(tops, list) or not tops:
            return None
        alts = [_entry(t) for t in tops]
        if any(a is None for a in alts):
            return None
        best = max(alts, key=lambda a: a[1])  # type: ignore[index]
        steps.append((chosen[0], chosen[1], *best))  # type: ignore[misc]
    if "".join(s[0] for s in steps) != text:
        return None
    out: list[Intervention] = []
    char = 0
    for pos, (token, lp, top, lp_top) in enumerate(steps):
        if top != token and lp_top > lp:  # a tie cannot tell which one was refused
            out.append(Intervention(pos=pos, char=char, wanted=top, forced=token,
                                    lp_wanted=round(lp_top, 4), lp_forced=round(lp, 4)))
        char += len(token)
    return out
