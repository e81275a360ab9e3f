"""Scoring: item states from a replay and a task, then rates, paired CIs and flips.
Reads only replays and tasks; never imports an engine."""

from vbw.score.metrics import build_report, comparison_pairs
from vbw.score.model import Report
from vbw.score.states import ItemStates, score_items

__all__ = ["ItemStates", "Report", "build_report", "comparison_pairs", "score_items"]
