"""JSON values as vbw decodes them: Python's json, except that integers too long for `int()`
stay exact instead of failing the whole object.

How it works and why: docs/design.md, section vbw.task.jsontext.values.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import orjson

INT_DIGITS = 4300  # CPython's default int<->str limit; longer integers become JsonBigInt
# Untrusted documents: arrays and objects nested at most this deep (a replay line holds a
# tool reply's message at the depth the reply held it, so a reply within the limit is
# written and read back within it, below pydantic's ~250); integer literals at most this long
MAX_DEPTH = 200
MAX_INT_DIGITS = INT_DIGITS


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
# [1e-9, 1e-4), which it writes without an exponent (tests/task/jsontext/test_values.py)
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


class JsonLimit(ValueError):
    """An untrusted JSON document nested past MAX_DEPTH or with an integer literal of
    more than MAX_INT_DIGITS digits."""


def _bounded_int(literal: str) -> int:
    digits = len(literal) - literal.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise JsonLimit(f"an integer of {digits:,} digits (vbw reads at most "
                        f"{MAX_INT_DIGITS:,})")
    return int(literal)


_CHUNK = 1 << 20  # bytes that `nesting` looks at in one step
# byte -> its class for `nesting`: 1 an opening bracket, 2 a closing one, 3 a quote,
# 4 a backslash, 0 anything else
_CLASS = bytes({91: 1, 123: 1, 93: 2, 125: 2, 34: 3, 92: 4}.get(b, 0) for b in range(256))


def nesting(data: str | bytes) -> int:
    """How deeply the arrays and objects of JSON text `data` nest (brackets inside its
    strings aside), at C speed in bounded memory: a MiB at a time, the bytes are classed
    by a translation table, and NumPy works on the few that matter: the quotes that are
    not escaped (an even run of backslashes before them) say which brackets lie outside
    strings, and those give the running depth."""
    import numpy as np  # only for a text with more brackets than MAX_DEPTH

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    depth = deepest = 0
    in_string, slashes = 0, 0  # carried: inside a string; backslashes ending the last chunk
    for start in range(0, len(raw), _CHUNK):
        kinds = np.frombuffer(raw[start:start + _CHUNK].translate(_CLASS), np.uint8)
        at = np.flatnonzero(kinds)
        kind = kinds[at]
        quotes, real = at[kind == 3], None
        slash = at[kind == 4]
        if len(slash):  # each backslash's run starts at slash[first[i]]
            first = np.maximum.accumulate(np.where(
                np.concatenate(([True], slash[1:] != slash[:-1] + 1)),
                np.arange(len(slash)), 0))
            j = np.searchsorted(slash, quotes) - 1  # the last backslash before each quote
            jj = np.maximum(j, 0)
            runs = np.where((j >= 0) & (slash[jj] == quotes - 1),
                            quotes - slash[first[jj]], 0)
            runs += np.where((runs > 0) & (slash[first[jj]] == 0), slashes, 0)
            real = quotes[(runs + np.where(quotes == 0, slashes, 0)) % 2 == 0]
            end = len(kinds) - 1
            slashes = (end + 1 - slash[first[-1]] + (slashes if slash[first[-1]] == 0 else 0)
                       if slash[-1] == end else 0)
        else:
            real = quotes if slashes % 2 == 0 or not len(quotes) or quotes[0] != 0 \
                else quotes[1:]
            slashes = 0
        brackets = at[kind <= 2]
        outside = brackets[(np.searchsorted(real, brackets) + in_string) % 2 == 0]
        if len(outside):
            running = depth + np.cumsum(np.where(kinds[outside] == 1, 1, -1))
            deepest, depth = max(deepest, int(running.max())), int(running[-1])
        in_string = (in_string + len(real)) % 2
    return int(deepest)


_NOT_OPEN = bytes(b for b in range(256) if b not in b"[{")


def check_nesting(data: str | bytes, max_depth: int = MAX_DEPTH) -> None:
    """Refuse (JsonLimit) JSON text nested more than `max_depth` deep; a text with no more
    opening brackets than that (most) costs one pass that counts them."""
    if len(data) <= 2 * max_depth:  # (the text of `depth` levels has 2 * depth characters)
        return
    opens = data.count("[") + data.count("{") if isinstance(data, str) else \
        len(data.translate(None, _NOT_OPEN))
    if opens > max_depth and (depth := nesting(data)) > max_depth:
        raise JsonLimit(f"nested {depth:,} arrays/objects deep (vbw reads at most "
                        f"{max_depth:,})")


def json_loads(data: str | bytes) -> Any:
    """json.loads(data) with integer literals bounded (JsonLimit), for a text whose
    nesting was checked; a RecursionError is a JsonLimit too."""
    try:
        return json.loads(data, parse_int=_bounded_int)
    except RecursionError:
        raise JsonLimit(f"nested {nesting(data):,} arrays/objects deep (vbw reads at most "
                        f"{MAX_DEPTH:,})") from None


# digits -> "0", any other byte -> " ": an integer literal of 64 bits or more has 19 digits
_DIGIT_RUNS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19


def exact(value: Any, data: str | bytes) -> Any:
    """`value`, decoded from `data` by orjson, as json.loads gives it: bytes without a run
    of 19 digits (a byte scan at C speed) hold no integer orjson could have made a float;
    otherwise (and for a str) the value is checked (orjson_agrees) and decoded by json if
    orjson changed it."""
    if type(data) is bytes and _LONG_RUN not in data.translate(_DIGIT_RUNS):
        return value
    return value if orjson_agrees(value) else json_loads(data)


def loads(data: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads(data) for an untrusted document, bounded (see the module docstring):
    orjson's values where they are json's, else json's; ValueError (JSONDecodeError or
    JsonLimit) when it is not JSON or is past the limits."""
    check_nesting(data, max_depth)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json_loads(data)
    return exact(value, data)
