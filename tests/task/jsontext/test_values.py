"""vbw.task.jsontext.values: json_text, orjson's writing of what json.dumps writes."""

from __future__ import annotations

import json
import math
import random
import struct

import orjson
import pytest

from vbw.task.jsontext.values import (MAX_DEPTH, MAX_INT_DIGITS, SPELLED_ALIKE, JsonLimit, json_text,
                                  loads, nesting)


def random_text(rng: random.Random) -> str:
    """Characters of every class json and orjson escape or pass through: ASCII controls,
    quotes and backslashes, DEL, line and paragraph separators, the BMP beyond them (no
    surrogates), astral characters."""
    pools = [[chr(i) for i in range(0x80)], ['"', "\\", "\x7f", "\u2028", "\u2029", "\ufeff"],
             [chr(rng.randrange(0x80, 0xD800)) for _ in range(50)],
             [chr(rng.randrange(0xE000, 0x10000)) for _ in range(50)],
             [chr(rng.randrange(0x10000, 0x110000)) for _ in range(50)]]
    return "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randrange(0, 40)))


def random_float(rng: random.Random) -> float:
    x = rng.random() * 10.0 ** rng.randrange(-12, 24)
    return rng.choice([x, -x, round(x, rng.randrange(0, 9)), 0.0, -0.0])


def test_orjson_spells_floats_as_json_outside_the_tiny_range() -> None:
    """The fact SPELLED_ALIKE rests on: orjson's text of a finite float
    is repr()'s except for magnitudes in [1e-9, 1e-4) (random bit patterns and decimals)."""
    rng = random.Random(4)
    differ = []
    for _ in range(200_000):
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if rng.random() < 0.5:
            x = round(rng.random() * 10.0 ** rng.randrange(-10, 20), rng.randrange(0, 10))
        if math.isfinite(x) and orjson.dumps(x).decode() != repr(x):
            differ.append(abs(x))
    assert differ and max(differ) < SPELLED_ALIKE and min(differ) >= 1e-9


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return random_text(rng)
    if kind == 1:
        return rng.choice([0, -1, 2 ** 63 - 1, -(2 ** 63), rng.randrange(-10 ** 9, 10 ** 9)])
    if kind == 2:
        x = random_float(rng)
        return x if x == 0 or abs(x) >= SPELLED_ALIKE else 1.5
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return random_text(rng)
    if kind == 5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if kind == 6:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 3)))
    return {random_text(rng): _random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_json_text_is_json_dumps_or_none(ensure_ascii: bool) -> None:
    """On random values of every plain part (texts of every character class, floats
    spelled alike, 64-bit ints, nesting, empty containers), json_text is json.dumps' text
    wherever it gives one; with ensure_ascii it gives one for ASCII values."""
    rng = random.Random(7 + ensure_ascii)
    given = 0
    for _ in range(3000):
        value = _random_value(rng)
        text = json_text(value, ensure_ascii)
        want = json.dumps(value, ensure_ascii=ensure_ascii)
        if text is not None:
            given += 1
            assert text == want.encode("utf-8")
        else:
            loose = json.dumps(value, ensure_ascii=False)
            assert ensure_ascii and (not loose.isascii() or "\x7f" in loose)
    assert given > 1000


def test_json_text_refuses_what_orjson_cannot_write_as_json() -> None:
    assert json_text({"a": "x\ud800"}, False) is None  # a lone surrogate
    assert json_text([2 ** 64]) is None  # an int beyond 64 bits
    assert json_text({"a": "caf\u00e9"}) is None  # json escapes it
    assert json_text({"a": "\x7f"}) is None  # and DEL
    assert json_text({"a": "caf\u00e9"}, False) == json.dumps({"a": "caf\u00e9"},
                                                             ensure_ascii=False).encode()


def _nested(depth: int, kind: str = "[") -> str:
    opens, closes = ('{"a":' * depth, "1" + "}" * depth) if kind == "{" else \
        ("[" * depth, "]" * depth)
    return opens + closes


@pytest.mark.parametrize("kind", ["[", "{"])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_loads_refuses_nesting_past_max_depth(kind: str, as_bytes: bool) -> None:
    """At MAX_DEPTH a document decodes; one level more is a JsonLimit (a ValueError), as
    is 100,000 levels of objects (orjson refuses it, and json's fallback recursed) and 3,000 levels
    that json would give a RecursionError for; brackets inside strings do not count."""
    def text(s: str) -> str | bytes:
        return s.encode() if as_bytes else s

    assert loads(text(_nested(MAX_DEPTH, kind))) == json.loads(_nested(MAX_DEPTH, kind))
    for depth in (MAX_DEPTH + 1, 3000, 100_000):
        with pytest.raises(JsonLimit, match=f"nested {depth:,} arrays/objects deep "
                                            f"\\(vbw reads at most {MAX_DEPTH}\\)"):
            loads(text(_nested(depth, kind)))
    brackets = '["' + "[{" * 5000 + '\\"]", [[1]]]'
    assert loads(text(brackets)) == json.loads(brackets)
    assert nesting(text(brackets)) == 3


@pytest.mark.parametrize("sign", ["", "-"])
def test_loads_refuses_integers_past_max_int_digits(sign: str) -> None:
    """An integer of MAX_INT_DIGITS digits is json's int; one digit more is a JsonLimit,
    never int()'s ValueError; a long float literal stays a float."""
    at = sign + "7" * MAX_INT_DIGITS
    assert loads(f"[{at}]") == [int(at)] and loads(f"[{at}]".encode()) == [int(at)]
    with pytest.raises(JsonLimit, match=f"an integer of {MAX_INT_DIGITS + 1:,} digits"):
        loads(f'{{"a": {sign}{"7" * (MAX_INT_DIGITS + 1)}}}')
    with pytest.raises(JsonLimit, match="an integer of 5,001 digits"):
        loads(("1" * 5001).encode())
    assert loads("1" * 5001 + ".5") == float("inf")


def test_loads_gives_jsons_values() -> None:
    """orjson's values where they are json's; json's for what orjson refuses or changes
    (NaN, a lone surrogate escape, an integer beyond 64 bits), for bytes and str."""
    for doc in ['{"a": 1, "b": [2.5, "x\\u00e9"]}', '[NaN, -Infinity]', '["\\ud800"]',
                '[123456789012345678901234, 18446744073709551615]', '{"a": 1, "a": 2}']:
        assert repr(loads(doc)) == repr(loads(doc.encode())) == repr(json.loads(doc))
    with pytest.raises(json.JSONDecodeError):
        loads(b"{bad")


def _depth(value: object) -> int:
    best, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            best = max(best, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return best


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_nesting_is_the_values_depth_at_any_chunk_size(chunk: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Random documents whose strings hold brackets, quotes and runs of backslashes (the
    escapes that decide where a string ends), cut into chunks of every size: nesting is
    the decoded value's depth."""
    from vbw.task.jsontext import values as jsonvalues

    monkeypatch.setattr(jsonvalues, "_CHUNK", chunk)
    rng = random.Random(chunk)
    atoms = ['a"[\\', "\\", '\\"{', "", 1, "[[{", '\\\\"]', '\\\\\\"[', '"', "}}"]

    def value(depth: int) -> object:
        r = rng.random()
        if depth > 12 or r < 0.3:
            return rng.choice(atoms)
        if r < 0.65:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["k", "[", '\\"{', "\\"]): value(depth + 1)
                for _ in range(rng.randrange(4))}

    for _ in range(300):
        v = value(0)
        assert nesting(json.dumps(v)) == nesting(json.dumps(v).encode()) == _depth(v)
