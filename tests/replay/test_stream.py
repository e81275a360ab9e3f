"""Streamed reading: an item line the light path declines (an arm with an interventions
list goes through the pydantic model) is read and scored like any other."""

from __future__ import annotations

import json
from pathlib import Path

from vbw.replay.stream import ScoredRecord, open_replay

META = {"format": "vbw-replay/1", "task": "t", "arms": ["unconstrained", "constrained[a]"]}
EVENT = {"pos": 0, "char": 0, "wanted": "```", "forced": "{", "lp_wanted": -1.6,
         "lp_forced": -2.1, "allowed_mass": 0.2}


def test_a_line_with_interventions_streams_as_a_scored_record(tmp_path: Path) -> None:
    lines = [{"meta": META},
             {"id": "a", "arms": {"unconstrained": {"text": "x"},
                                  "constrained[a]": {"text": "{}", "interventions": [EVENT]}}},
             {"id": "b", "arms": {"unconstrained": {"text": "y"},
                                  "constrained[a]": {"text": "{}", "interventions": []}}}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = list(open_replay(path).records())
    assert all(isinstance(r, ScoredRecord) for r in got)
    assert [(r.id, r.texts) for r in got] == [
        ("a", {"unconstrained": "x", "constrained[a]": "{}"}),
        ("b", {"unconstrained": "y", "constrained[a]": "{}"})]
    full = [rec for _, rec in open_replay(path).items(full=True)]
    assert full[0].arms["constrained[a]"].interventions[0].forced == "{"
    assert full[1].arms["constrained[a]"].interventions == []
