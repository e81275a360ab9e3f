"""Replays with interventions for tests: a committed replay's items, each enforced arm
given hand-made events consistent with its text (`forced` is the text at `char`), so the
reporting side is tested before a replay recorded by the decode loop exists.

Per item i (in file order) and enforced arm with a text: an event on the object's opening
`{` (structure) unless i % 5 == 4 (recorded, none: []); for even i also one on the first
character of the text's last run of digits (for the bundled tasks: a value, most often
the answer). `unrecorded` arms keep no field (not recorded).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from vbw.task.arms import parse_arm

_DIGITS = re.compile(r"[0-9]+")
PWN = "<img src=x onerror=window.pwned=5>"  # a refused token of markup: must stay text


def events_for(i: int, text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if i % 5 == 4:
        return out
    start = text.find("{")
    if start >= 0:
        out.append({"pos": 0, "char": start, "wanted": "Sure", "forced": "{",
                    "lp_wanted": -0.25, "lp_forced": -1.5, "allowed_mass": 0.2})
    runs = list(_DIGITS.finditer(text))
    if i % 2 == 0 and runs:
        at = runs[-1].start()
        out.append({"pos": len(out) + 3, "char": at, "wanted": PWN,
                    "forced": text[at], "lp_wanted": -0.5, "lp_forced": -1.0 - i / 10})
    return out


def with_interventions(src: Path, dst: Path, n: int | None = None,
                       unrecorded: Collection[str] = ()) -> Path:
    """Write `src`'s header and first `n` items to `dst`, with events (module docstring)."""
    lines = src.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    items = [json.loads(x) for x in lines[1:] if x.strip() and not x.startswith('{"end"')]
    for i, item in enumerate(items[:n]):
        for key, arm in item["arms"].items():
            if parse_arm(key).enforced and key not in unrecorded and arm.get("text"):
                arm["interventions"] = events_for(i, arm["text"])
        out.append(json.dumps(item, ensure_ascii=False))
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst
