from __future__ import annotations

import pytest

from vbw.task.coerce import (BooleanCoercion, IdentityCoercion, NumberCoercion,
                             StringCoercion, number_from_text)


@pytest.mark.parametrize("text,expected", [
    ("$1,200", 1200.0), ("-3.5", -3.5), ("from 2 to 7", 7.0), ("none", None),
    ("1,2,3", 123.0), ("$-4", -4.0),
])
def test_number_from_text(text: str, expected: float | None) -> None:
    assert number_from_text(text) == expected


def test_number_coercion() -> None:
    c = NumberCoercion(kind="number")
    assert c.apply(3) == 3 and c.apply(2.5) == 2.5
    assert c.apply("about 12") == 12.0
    assert c.apply(True) is None and c.apply(None) is None and c.apply([1]) is None


def test_string_boolean_identity() -> None:
    s = StringCoercion(kind="string")
    assert s.apply("  x ") == "x" and s.apply(3) == "3" and s.apply(False) == "false"
    assert s.apply({"a": 1}) is None
    b = BooleanCoercion(kind="boolean")
    assert b.apply("Yes") is True and b.apply(False) is False and b.apply("maybe") is None
    assert IdentityCoercion(kind="identity").apply({"a": [1]}) == {"a": [1]}


def test_last_number_is_the_last_match_of_a_whole_scan() -> None:
    """last_number scans only from the run holding the last digit: on random texts of the
    characters that matter it finds what a scan of the whole text finds."""
    import random
    from collections import deque

    from vbw.task.coerce import _NUMBER, last_number

    def whole(text: str) -> str | None:
        last = deque(_NUMBER.finditer(text.replace("$", "")), maxlen=1)
        return last[0].group(0) if last else None

    rng = random.Random(7)
    for _ in range(5_000):
        text = "".join(rng.choice("0123456789,.-$ a\n") for _ in range(rng.randint(0, 140)))
        assert last_number(text) == whole(text), text
    assert last_number("pay $1,200.50 - then 3-4,5.") == "-4,5"
