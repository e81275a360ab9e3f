"""Scoring: item states from a replay and a task, then rates, paired CIs and flips.
Reads only replays and tasks; never imports an engine. The names below load on first use
(vbw.lazy), so a light module of the package imports alone."""

from __future__ import annotations

from vbw.lazy import lazy_exports

_WHERE = {"build_report": "vbw.score.metrics", "comparison_pairs": "vbw.score.pairs",
          "Report": "vbw.score.results", "ItemStates": "vbw.score.states",
          "score_stream": "vbw.score.stream"}

__all__ = ["ItemStates", "Report", "build_report", "comparison_pairs", "score_stream"]

__getattr__ = lazy_exports(__name__, _WHERE)
