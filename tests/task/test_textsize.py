"""Text sizes worked out before the text is built (vbw.task.textsize): upper bounds on
str() and repr() of template values, and on a %-format's result, that never undercount
(random values against the real text) and stop once past their limit."""

from __future__ import annotations

import random

import pytest
from jinja2.utils import Namespace

from vbw.task.textsize import printf_size, text_size

BIG = 10 ** 9


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return "".join(rng.choice("ab'\"\\\n\x00é😀") for _ in range(rng.randrange(6)))
    if kind == 1:
        return rng.choice([0, -7, 2 ** 70, True, None])
    if kind == 2:
        return rng.choice([0.1, -1.2345678901234567e-308, float("inf")])
    if kind in (3, 4):
        return "plain text"
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 6:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randrange(4)))
    return {str(_value(rng, depth + 1)): _value(rng, depth + 1) for _ in range(3)}


def test_bounds_never_undercount() -> None:
    rng = random.Random(30)
    for _ in range(3000):
        v = _value(rng)
        assert text_size(v, BIG) >= len(str(v)), v
        assert text_size(v, BIG, quoted=True) >= len(repr(v)), v


def test_references_count_as_their_text() -> None:
    s = "x" * 1000
    assert text_size([s] * 50, BIG) >= 50 * 1002
    ns = Namespace(a=[s, s])
    assert text_size(ns, BIG) >= len(repr(ns))


def test_the_walk_stops_past_its_limit() -> None:
    """A list of a million references to a long string is not walked to its end."""
    s = "x" * 1000
    assert text_size([s] * 1_000_000, 10_000) <= 10_000 + 2 + 2_000_000 + 1002


@pytest.mark.parametrize("fmt, args", [
    ("%s and %r", ("a'", "b\n")), ("%5d|%-8.3f|%x", (42, 3.14159, 255)),
    ("%(a)s %(b)10s %%", {"a": [1, 2], "b": "x"}), ("%*s %.*f", (7, "y", 2, 1.5)),
    ("%a", ("é😀",)), ("%s", "single"), ("%c%%", 65), ("%(a(b))s", {"a(b)": "nested"}),
    ("%s", {"a mapping": "x" * 1000}), ("%s %s", ({"k": "v" * 1000}, [1, 2])),
])
def test_printf_bound_never_undercounts(fmt: str, args: object) -> None:
    assert printf_size(fmt, args, BIG) >= len(fmt % args)


@pytest.mark.parametrize("fmt, args", [
    ("%999999s" * 3, (1, 2, 3)), ("%.999999f%.999999f%.999999f", (1.0, 2.0, 3.0)),
    ("%*s%*s%*s", (999999, "a", 999999, "b", 999999, "c")),
    ("%(k)999999s" * 3, {"k": 1}), ("%(a(b))999999s" * 3, {"a(b)": 1}),
])
def test_printf_widths_are_summed(fmt: str, args: object) -> None:
    assert printf_size(fmt, args, BIG) > 2_999_997
