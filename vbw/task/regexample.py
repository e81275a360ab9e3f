"""Short strings a regex matches, for building gold-shaped answers (vbw.task.instance).

How it works and why: docs/design.md, section vbw.task.regexample.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

try:  # the parser's opcodes, and the parser (Python 3.11+ names)
    import re._constants as C  # noqa: N812
    import re._parser as sre_parse
except ImportError:  # Python 3.10: the same modules under their old names
    import sre_constants as C  # type: ignore[no-redef]  # noqa: N812
    import sre_parse  # type: ignore[no-redef]

CAP = 8            # candidate strings kept per node
MAX_CHARS = 256    # a candidate longer than this is dropped (e.g. a{5000})
_TRIES = "a0 A_-.zZ9x!"  # characters tried, in order, for a set or a negated literal
_CATEGORY = {C.CATEGORY_DIGIT: "0", C.CATEGORY_NOT_DIGIT: "a", C.CATEGORY_SPACE: " ",
             C.CATEGORY_NOT_SPACE: "a", C.CATEGORY_WORD: "a", C.CATEGORY_NOT_WORD: " "}

# Possessive repeats and atomic groups are parsed from Python 3.11 on (None before: 3.10's
# parser refuses them, so they never reach _node there)
_ATOMIC_GROUP = getattr(C, "ATOMIC_GROUP", None)
_REPEATS = tuple(op for op in (C.MAX_REPEAT, C.MIN_REPEAT,
                               getattr(C, "POSSESSIVE_REPEAT", None)) if op is not None)


class NoExample(Exception):
    """The pattern holds something this module does not invert (e.g. a backreference)."""


def examples(pattern: str, flags: int = 0) -> list[str]:
    """Up to CAP short strings that `pattern` may fullmatch, shortest first (not checked:
    see the module docstring); [] when the pattern does not parse or cannot be inverted."""
    try:
        parsed = sre_parse.parse(pattern, flags)
        out = _seq(list(parsed))
    except (re.error, NoExample, RecursionError, OverflowError, ValueError):
        return []
    return sorted(dict.fromkeys(s for s in out if len(s) <= MAX_CHARS), key=len)[:CAP]


def _seq(nodes: list[tuple[Any, Any]]) -> list[str]:
    acc = [""]
    for op, av in nodes:
        options = _node(op, av)
        acc = [a + b for a, b in itertools.islice(itertools.product(acc, options), CAP)]
        if any(len(a) > MAX_CHARS for a in acc):
            raise NoExample("too long")
    return acc


def _node(op: Any, av: Any) -> list[str]:
    if op is C.LITERAL:
        return [chr(av)]
    if op is C.NOT_LITERAL:
        return [next(c for c in _TRIES if ord(c) != av)]
    if op is C.ANY:
        return ["a"]
    if op is C.IN:
        return [_in_set(av)]
    if op is C.BRANCH:
        return [s for branch in av[1] for s in _seq(list(branch))][:CAP]
    if op is C.SUBPATTERN:
        return _seq(list(av[-1]))
    if op in _REPEATS:
        low, high, body = av
        one = _seq(list(body))
        counts = [low] if high == low else [low, low + 1]
        out = []
        for n in counts:
            if n * max((len(s) for s in one), default=0) > MAX_CHARS:
                raise NoExample("too long")
            out += [s * n for s in one]
        return out[:CAP]
    if op is _ATOMIC_GROUP:
        return _seq(list(av))
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return [""]  # anchors and lookarounds take no characters (the matcher decides)
    raise NoExample(f"{op} is not inverted")


def _in_set(items: list[tuple[Any, Any]]) -> str:
    negate = bool(items) and items[0][0] is C.NEGATE
    body = items[1:] if negate else items
    if not negate:
        for op, av in body:
            if op is C.LITERAL:
                return chr(av)
            if op is C.RANGE:
                return chr(av[0])
            if op is C.CATEGORY and av in _CATEGORY:
                return _CATEGORY[av]
    for c in _TRIES:
        if _member(c, body) != negate:
            return c
    raise NoExample("no character of the set tried")


def _member(c: str, items: list[tuple[Any, Any]]) -> bool:
    o = ord(c)
    for op, av in items:
        if op is C.LITERAL and av == o:
            return True
        if op is C.RANGE and av[0] <= o <= av[1]:
            return True
        if op is C.CATEGORY:
            rx = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D",
                  C.CATEGORY_SPACE: r"\s", C.CATEGORY_NOT_SPACE: r"\S",
                  C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W"}.get(av)
            if rx is not None and re.fullmatch(rx, c):
                return True
    return False
