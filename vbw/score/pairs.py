"""The paired comparisons a report makes (which arm pairs, in which role) and one paired
difference of 0/1 outcomes: shared by the answer's comparisons (vbw.score.metrics), the
fields' (vbw.score.fields) and mode=compare's (vbw.score.compare)."""

from __future__ import annotations

import numpy as np

from vbw.score.bootstrap import delta_ci
from vbw.score.paired import ALPHA, mcnemar_p, min_detectable_effect
from vbw.score.results import Delta
from vbw.task.arms import Arm

HEADLINE_ROLE = "headline: grammar off -> on, same contract"
TOOL_ROLES = {"constrained": "headline: response_format -> forced tool call, both grammar-bound",
              "prompt_json": "headline: JSON asked in the prompt -> forced tool call"}
SECONDARY_ROLE = "secondary: also changes whether the model reasons in text (confounded)"


def comparison_pairs(arms: list[Arm]) -> list[tuple[Arm, Arm, str]]:
    """(from, to, kind): headline prompt_json[S] -> constrained[S] per constrained arm, then
    constrained[S] -> tool_call[S] and prompt_json[S] -> tool_call[S] per tool_call arm, then
    secondary unconstrained -> each constrained[S], tool_call[S] and reason_then_constrain arm."""
    pairs = []
    for a in arms:
        twin = Arm("prompt_json", a.schema)
        if a.kind == "constrained" and twin in arms:
            pairs.append((twin, a, "headline"))
    for a in arms:
        for kind in ("constrained", "prompt_json"):
            if a.tool and Arm(kind, a.schema) in arms:  # type: ignore[arg-type]
                pairs.append((Arm(kind, a.schema), a, "headline"))  # type: ignore[arg-type]
    free = Arm("unconstrained", None)
    if free in arms:
        pairs += [(free, a, "secondary") for a in arms if a.enforced]
    return pairs


def paired_delta(before: np.ndarray, after: np.ndarray, rng: np.random.Generator,
                 resamples: int) -> Delta:
    """mean(after) - mean(before) for paired 0/1 vectors: bootstrap CI (drawn from rng),
    discordant counts, exact McNemar p-value, minimum detectable effect and the verdict
    (an effect is McNemar p < ALPHA)."""
    n = int(before.size)
    lo, hi = delta_ci(before, after, rng, resamples)
    n10, n01 = int((before & ~after).sum()), int((~before & after).sum())
    p = mcnemar_p(n10, n01)
    return Delta(delta=float(after.mean() - before.mean()) if n else 0.0, ci95=(lo, hi),
                 excludes_0=bool(lo > 0 or hi < 0), n10=n10, n01=n01, mcnemar_p=p,
                 mde=min_detectable_effect(n, n10 + n01), effect=p < ALPHA)


def comparison_key(src: str, dst: str) -> str:
    """The key a comparison's random stream is derived from."""
    return f"{src} -> {dst}"


def role_of(src: Arm, dst: Arm, kind: str) -> str:
    """The role a comparison's report line states."""
    return (SECONDARY_ROLE if kind != "headline" else
            TOOL_ROLES[src.kind] if dst.tool else HEADLINE_ROLE)
