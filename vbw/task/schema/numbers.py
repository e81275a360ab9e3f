"""Numbers for the instance builder (vbw.task.instance): an integer or a number within a
schema's bounds and a multiple of its `multipleOf`, or why there is none.

A fractional `multipleOf` is decided as jsonschema decides it (it divides floats): a
value is only proposed when that test passes, and "no multiple" is only claimed when none
lies within the bounds widened by a millionth of a step on each side.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from vbw.task.schema.walk import Unbuildable, Unsatisfiable, bounds_text, is_num, number_bounds

EXACT = 2 ** 53  # integers beyond this are not exact as floats (jsonschema divides floats)


def integer(node: dict[str, Any]) -> int:
    """The integer within the bounds nearest 0 that is a multiple of `multipleOf`."""
    low, high = _integer_bounds(node)
    target = max(low, 0) if low is not None else 0
    target = min(target, high) if high is not None else target
    step = node.get("multipleOf")
    if not is_num(step) or step <= 0:
        return target
    if not float(step).is_integer():
        # the integers that are multiples of p/q (in lowest terms) are the multiples of p
        if any(abs(v) > EXACT for v in (low, high) if v is not None):
            raise Unbuildable("bounds beyond 2**53 with a fractional multipleOf")
        step = Fraction(str(step)).numerator
    step = int(step)
    up, down = -(-target // step) * step, target // step * step
    for v in (up, down):
        if (low is None or v >= low) and (high is None or v <= high):
            return v
    raise Unsatisfiable(f"no multiple of {node['multipleOf']} within the bounds "
                        f"{bounds_text(node)}")


def _integer_bounds(node: dict[str, Any]) -> tuple[int | None, int | None]:
    """The lowest and highest integer within the bounds (None: unbounded); bounds meeting
    at one integer (`minimum: 5, maximum: 5`) leave that one."""
    lo, lo_open, hi, hi_open = number_bounds(node)
    low = None if lo is None else math.floor(lo) + 1 if lo_open else math.ceil(lo)
    high = None if hi is None else math.ceil(hi) - 1 if hi_open else math.floor(hi)
    if low is not None and high is not None and low > high:
        raise Unsatisfiable(f"no integer within the bounds {bounds_text(node)}")
    return low, high


def number(node: dict[str, Any]) -> float | int:
    """A number within the bounds (0 when it is), a multiple of `multipleOf`."""
    step = node.get("multipleOf")
    if is_num(step) and step > 0 and not float(step).is_integer():
        return _fraction_multiple(node, step)
    if "multipleOf" in node:
        return integer(node)
    lo, lo_open, hi, hi_open = number_bounds(node)
    above = lo is None or lo < 0 or (lo == 0 and not lo_open)
    below = hi is None or hi > 0 or (hi == 0 and not hi_open)
    if above and below:
        return 0
    if lo is not None:
        return lo if not lo_open else (lo + 1 if hi is None else (lo + hi) / 2)
    return hi if not hi_open else hi - 1


def _fraction_multiple(node: dict[str, Any], step: float) -> float | int:
    """A number k * step within the bounds that jsonschema calls a multiple of `step`.
    Unsatisfiable only when no multiple lies within the bounds widened by a millionth of
    a step on each side (jsonschema divides floats, so a value a hair outside a multiple
    may pass); Unbuildable when none of the few candidates tried passes."""
    lo, lo_open, hi, hi_open = number_bounds(node)
    exact, slack = Fraction(str(step)), Fraction(1, 10 ** 6)
    k_lo = None if lo is None else math.ceil(Fraction(lo) / exact - slack)
    k_hi = None if hi is None else math.floor(Fraction(hi) / exact + slack)
    if k_lo is not None and k_hi is not None and k_lo > k_hi:
        raise Unsatisfiable(f"no multiple of {step} within the bounds {bounds_text(node)}")
    start = 0 if k_lo is None else max(0, k_lo)  # the multiple nearest 0
    start = start if k_hi is None else min(start, k_hi)
    for k in (start, start + 1, start - 1):
        for v in (k * step, float(k * exact), lo, hi):
            if v is not None and _within(v, lo, lo_open, hi, hi_open) and \
                    _is_multiple(v, step):
                return v
    raise Unbuildable(f"no multiple of {step} built within the bounds {bounds_text(node)}")


def _within(v: float, lo: Any, lo_open: bool, hi: Any, hi_open: bool) -> bool:
    return ((lo is None or v > lo or (v == lo and not lo_open))
            and (hi is None or v < hi or (v == hi and not hi_open)))


def _is_multiple(v: float, step: float) -> bool:
    """jsonschema's multipleOf test for a float step."""
    try:
        quotient = v / step
        return int(quotient) == quotient
    except (OverflowError, ValueError, ZeroDivisionError):
        return False
