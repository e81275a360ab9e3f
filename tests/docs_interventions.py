"""The docs' example of an intervention, rendered from a committed replay (so the token
texts and probabilities shown are the replay's, never typed in): one real BFCL item of
the SmolLM2 outlines replay, where the grammar forced a value the model did not want."""

from __future__ import annotations

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPLAY = "replays/bfcl_simple/smollm2_135m/outlines.jsonl"
ITEM, ARM = "simple_17", "constrained[arguments]"
REGENERATE = ("vbw mode=live model=smollm2_135m engine=outlines task=bfcl_simple n=200 "
              "threads=1")


def _shown(text: str) -> str:
    """A token's text as a JSON string in a double-backtick code span (a token may hold
    backticks), safe inside a Markdown table."""
    return "`` " + json.dumps(text, ensure_ascii=False).replace("|", "\\|") + " ``"


def _p(lp: float) -> str:
    return f"{math.exp(lp):.3g}"


def intervention_example(replay: Path = ROOT / REPLAY) -> str:
    from vbw.replay import read_replay

    rec = next((r for r in read_replay(replay).records if r.id == ITEM), None)
    arm = rec.arms.get(ARM) if rec is not None else None
    if arm is None or arm.interventions is None:
        return (f"Not recorded in `{REPLAY}` yet: it was generated before vbw recorded "
                f"interventions (regenerate it with `{REGENERATE}`).")
    rows = [f"`{ITEM}`, arm `{ARM}`, from `{REPLAY}`; the output:", "",
            "```json", arm.text or "", "```", "",
            "| output token | at character | the model's choice (p) | forced instead (p) | "
            "allowed mass |", "|---|---|---|---|---|"]
    for iv in arm.interventions:
        mass = "" if iv.allowed_mass is None else f"{iv.allowed_mass:.3g}"
        forced = _shown(iv.forced) if iv.forced else "end of generation"
        rows.append(f"| {iv.pos} | {iv.char} | {_shown(iv.wanted)} ({_p(iv.lp_wanted)}) | "
                    f"{forced} ({_p(iv.lp_forced)}) | {mass} |")
    return "\n".join(rows)
