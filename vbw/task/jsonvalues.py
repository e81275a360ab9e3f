"""JSON values as vbw decodes them: Python's json, except that integers too long for `int()`
stay exact instead of failing the whole object.

Python refuses to convert a decimal string of more than 4,300 digits to `int` (the
`sys.set_int_max_str_digits` guard against its quadratic conversion), so the standard
decoder raises on `{"answer": <100,000 digits>}` and the object would count as missing.
JSON and JSON Schema put no bound on an integer, so such a literal decodes to a
`JsonBigInt`: a `Decimal` (exact, built in linear time) marked as integral. The number
helpers here treat it as a number everywhere an answer is compared; converting it to a
float gives +-inf, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import orjson

INT_DIGITS = 4300  # CPython's default int<->str limit; longer integers become JsonBigInt


class JsonBigInt(Decimal):
    """A JSON integer literal with more than INT_DIGITS digits, kept exactly."""

    __slots__ = ()


def _parse_int(literal: str) -> int | JsonBigInt:
    """`int(literal)`, or a JsonBigInt when it is too long for int() (under any limit)."""
    if len(literal) - literal.startswith("-") > INT_DIGITS:
        return JsonBigInt(literal)
    try:
        return int(literal)
    except ValueError:  # a process that lowered sys.set_int_max_str_digits
        return JsonBigInt(literal)


_DECODER = json.JSONDecoder(parse_int=_parse_int)


def decode_at(text: str, start: int) -> Any:
    """The JSON value that starts exactly at `text[start]` (no whitespace skipped)."""
    return decode_span_at(text, start)[0]


def decode_span_at(text: str, start: int) -> tuple[Any, int]:
    """decode_at's value and the index just past it."""
    return _DECODER.raw_decode(text, start)


_I64 = float(2 ** 63)


def orjson_agrees(value: Any) -> bool:
    """Whether `value`, as orjson decoded a text, is what Python's json decodes from it:
    orjson makes an integer literal beyond 64 bits a float (json keeps the int), always
    one of magnitude 2**63 or more, so a value holding no such float is json's (where
    orjson refuses a text, json decides anyway). A float literal that large is refused
    too, which only costs json's decode. Faster than searching the text for a run of 19
    digits (a regex scan of every character), and without recursion (orjson_plain's
    walk)."""
    return orjson_plain(value) is not None


_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def orjson_plain(value: Any) -> bool | None:
    """orjson_agrees and vbw.task.validity.plain in one walk, for a value orjson decoded:
    None where json would decode the text otherwise (orjson_agrees' False), else whether
    the value is plain. orjson gives only str keys and finite floats, so plain there means
    every int fits in 64 signed bits (orjson also gives unsigned 64-bit ints)."""
    fits = True
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is float:
            if not -_I64 < v < _I64:
                return None
        elif t is int:
            if fits and not _INT64[0] <= v <= _INT64[1]:
                fits = False
        elif t is dict:
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
    return fits


# orjson spells a finite float as repr() does (json's spelling) except for magnitudes in
# [1e-9, 1e-4), which it writes without an exponent (tests/task/test_jsonvalues.py)
SPELLED_ALIKE = 1e-4
# orjson's indented text is json's once the layout goes: a raw line break is never inside
# a string (it is escaped there), so every one, with the indent after it, is layout
_ITEM_BREAK = re.compile(rb",\n *")
_BREAK = re.compile(rb"\n *")


def json_text(value: Any, ensure_ascii: bool = True, compact: bool = False) -> bytes | None:
    """`json.dumps(value, ensure_ascii=...)` as UTF-8 (with `compact`, its
    `separators=(",", ":")` text), written by orjson (several times faster on long
    texts), for a value the caller knows to be made of str-keyed dicts, lists, tuples,
    str, int, bool, None and floats orjson spells alike (none of magnitude in [1e-9,
    SPELLED_ALIKE)). None where orjson cannot give json's text: it refuses a lone
    surrogate or an int beyond 64 bits, and with `ensure_ascii` a text that is not
    printable ASCII plus layout (json escapes the rest, DEL included)."""
    try:
        text = orjson.dumps(value, option=None if compact else orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return None
    if ensure_ascii and (not text.isascii() or b"\x7f" in text):  # json escapes DEL too
        return None
    return text if compact else _BREAK.sub(b"", _ITEM_BREAK.sub(b", ", text))


def is_number(value: Any) -> bool:
    """A JSON number as decoded: int, float or JsonBigInt, never a boolean."""
    t = type(value)
    if t is int or t is float:  # (what a decoder gives, checked first: scoring asks often)
        return True
    return isinstance(value, (int, float, JsonBigInt)) and not isinstance(value, bool)


def as_float(value: int | float | Decimal) -> float:
    """float(value), saturating to +-inf where Python would raise OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
