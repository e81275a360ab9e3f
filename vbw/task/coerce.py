"""Coercions: turn an extracted candidate into the answer a checker compares with gold.

A coercion returns None when the candidate cannot become an answer of that type; a free
text chain then tries its next step, and a JSON answer counts as missing. The vocabulary
is the COERCIONS registry: a class registers itself, and `Coercion` is built from it.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Literal

from vbw.task.base import StrictModel
from vbw.task.jsontext.values import JsonBigInt, is_number
from vbw.task.kinds import BaseCoercion
from vbw.task.registry import Registry

COERCIONS: Registry[StrictModel] = Registry("coercion", group="vbw.coercions")

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")  # no backtracking beyond one match: linear


_RUN = "-0123456789,."  # every character a number-looking match can hold


def last_number(text: str) -> str | None:
    """The LAST number-looking run in `text` once `$` signs are deleted, as written.

    Found without scanning the whole text (a reasoning text holds many numbers, and a
    free-text chain reads its last one): every match holds a digit and only characters
    of _RUN, so no match crosses a character outside _RUN, and a left-to-right scan
    started just after such a character finds the same matches after it as a scan from
    the start. The scan starts at the run of _RUN characters that holds the last digit
    (found by C-speed rfind and rstrip: linear), whose matches include the last one."""
    text = text.replace("$", "")
    start = 0
    if len(text) > 64:  # (a short candidate is scanned whole: fewer steps)
        end = max(map(text.rfind, "0123456789"))
        if end < 0:
            return None
        start = len(text[:end].rstrip(_RUN))
    last = deque(_NUMBER.finditer(text, start), maxlen=1)
    return last[0].group(0) if last else None


def number_from_text(text: str) -> float | None:
    """Delete `$`, take the LAST number-looking match, delete commas, parse as float."""
    raw = last_number(text)
    if raw is None:
        return None
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None


@COERCIONS.register
class IdentityCoercion(BaseCoercion):
    """Keep the candidate as it is (objects, lists, strings alike)."""

    kind: Literal["identity"]

    def apply(self, value: Any) -> Any:
        return value


@COERCIONS.register
class NumberCoercion(BaseCoercion):
    """A JSON number as is (never a boolean, any length); a string through
    `number_from_text`."""

    kind: Literal["number"]

    def apply(self, value: Any) -> Any:
        if is_number(value):
            return value
        if isinstance(value, str):
            return number_from_text(value)
        return None


@COERCIONS.register
class StringCoercion(BaseCoercion):
    """A string as is; a number or boolean as its JSON spelling; anything else nothing."""

    kind: Literal["string"]
    strip: bool = True

    def apply(self, value: Any) -> Any:
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, JsonBigInt):
            value = str(value)
        elif isinstance(value, (int, float)):
            value = repr(value)
        if not isinstance(value, str):
            return None
        return value.strip() if self.strip else value


@COERCIONS.register
class BooleanCoercion(BaseCoercion):
    """A JSON boolean, or the strings true/false/yes/no (any case)."""

    kind: Literal["boolean"]

    def apply(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return {"true": True, "yes": True, "false": False, "no": False}.get(
                value.strip().lower())
        return None


Coercion = COERCIONS.union()
COERCION_KINDS = COERCIONS.classes
