"""The docs' example of an intervention, rendered from a committed replay (so the token
texts and probabilities shown are the replay's, never typed in): one real BFCL item of
the SmolLM2 outlines replay, where the grammar forced a value the model did not want."""

from __future__ import annotations

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPLAY = "replays/bfcl_simple/smollm2_135m/outlines.jsonl"
ITEM, ARM = "simple_17", "constrained[arguments]"
REGENERATE = ("vbw mode=live model=smollm2_135m engine=outlines task=bfcl_simple n=200 "
              "threads=1 batch.sequences=1")


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


def results_lines(r) -> list[str]:
    """Under a results table (docs/results.md): the report's per-arm intervention summary,
    by outcome, and the headline flips' split, as report.md gives them (its heading moved
    under the table's); nothing for a replay that recorded none."""
    from vbw.report.interventions import markdown_lines, recorded

    if not r.interventions or not recorded(r):
        return []
    return [("##### " + line[3:]) if line.startswith("## ") else line
            for line in markdown_lines(r)]


REGENERATED = ROOT / "tests" / "reference" / "regen_bfcl_simple_outlines.json"


def regenerated_note(path: Path = REGENERATED) -> str:
    """What the regeneration changed against the replay it replaced (docs/generate/regen_changes.py
    made the JSON before the old file was replaced); empty before any regeneration."""
    if not path.is_file():
        return ""
    d = json.loads(path.read_text(encoding="utf-8"))
    rows = ["", "", f"Regenerated with interventions recorded; against the replay it replaced "
            f"(`git show {d['old']['revision']}:{d['path']}`, made before the exact KV-cache "
            f"reuse), per arm: texts unchanged and changed, and accuracy before → after "
            f"(items with any changed text: {d['items_with_a_changed_text']} of "
            f"{next(iter(d['arms'].values()))['items']}):", "",
            "| arm | texts unchanged | texts changed | accuracy before | accuracy after |",
            "|---|---|---|---|---|"]
    for key, a in d["arms"].items():
        rows.append(f"| `{key}` | {a['same']} | {a['changed']} | "
                    f"{100 * a['before']['accuracy']:.1f}% | {100 * a['after']['accuracy']:.1f}% |")
    return "\n".join(rows)
