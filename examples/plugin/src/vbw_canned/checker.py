"""The `relative` checker: a number within a relative tolerance of the gold.

`check: {kind: relative, within: 0.05}` calls an answer right when both are numbers and
|answer - gold| <= within * |gold| (exactly equal when the gold is 0). Like every checker
it says, for vbw's check mode, which answers it calls right for a gold (`gold_answers`):
the gold itself, and those stand for every right answer (`answers_complete`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from vbw.task.kinds import BaseChecker


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


class RelativeChecker(BaseChecker):
    """A number within `within` times the gold's size of the gold."""

    kind: Literal["relative"]
    within: float = Field(default=0.01, ge=0.0, le=1.0)

    answers_complete: ClassVar[bool] = True

    def gold_answers(self, gold: Any, schema: Any = None) -> list[Any]:
        """The gold itself."""
        return [gold]

    def check(self, answer: Any, gold: Any, schema: dict[str, Any] | None = None) -> bool:
        """Whether |answer - gold| <= within * |gold| (both numbers)."""
        a, g = _number(answer), _number(gold)
        if a is None or g is None:
            return False
        return abs(a - g) <= self.within * abs(g)
