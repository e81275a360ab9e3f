"""vbw: does forcing an LLM's output into a JSON Schema change its answers?

Pipeline: task (vbw.task) -> generate (vbw.generate, live only) -> replay (vbw.replay)
-> score (vbw.score) -> report (vbw.report). Scoring never imports an engine.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
