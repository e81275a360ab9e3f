"""A load-time check that rejects the classic catastrophic-backtracking regex shapes.

Python's `re` backtracks, so a pattern can take polynomial or exponential time on a hostile
model output: the bundled GSM8K pattern `\\s*\\**\\s*` before a number took 6 s on 1,000
spaces. A task file's patterns are checked when it loads, and these shapes are refused
with the fix spelled out:

- two unbounded quantifiers that can match the same characters, with only optional items
  between them (`\\s*\\**\\s*`, `\\d+\\s*\\d+`, `.*.*`): each split of a run between them is
  tried again;
- inside an unbounded repeat, a variable-length quantifier that the next iteration's can
  continue (`(a+)+`, `(\\w+\\s?)*`, `(\\d{1,3},?)+`): the splits multiply per iteration.

A shape is only refused when something after it can fail (a pattern that ends, or ends in
optional items, takes its first match). Possessive quantifiers (`*+`, `++`, `?+`) and atomic
groups `(?>...)` never backtrack, so they are the fix whenever they keep the meaning. This is
a screen for the common mistakes, not a proof of linear time (alternations such as
`(a|a)*` pass it); regex steps also read a bounded part of the text (`max_chars`).
"""

from __future__ import annotations

import re
from re import _constants as c
from re import _parser as sre
from typing import Any, Callable

_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT)
_PROBES = [chr(i) for i in range(0x250)] + list(
    "\u00a0\u1680\u2000\u2028\u2029\u202f\u205f\u3000\ufeff"      # spaces
    "\u0660\u06f0\u0966\uff10\u0391\u0430\u05d0\u4e00\U0001d7ce")  # digits, letters
_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    c.CATEGORY_DIGIT: str.isdecimal,
    c.CATEGORY_SPACE: str.isspace,
    c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    c.CATEGORY_LINEBREAK: lambda ch: ch == "\n",
}


class _Chars:
    """A character class as tests (any may hold), plus the characters worth probing."""

    def __init__(self, tests: tuple[Callable[[str], bool], ...] = (),
                 points: tuple[str, ...] = ()) -> None:
        self.tests, self.points = tests, points

    def __or__(self, other: _Chars) -> _Chars:
        return _Chars(self.tests + other.tests, self.points + other.points)

    def test(self, ch: str) -> bool:
        return any(t(ch) for t in self.tests)

    def overlaps(self, other: _Chars) -> bool:
        return any(self.test(ch) and other.test(ch)
                   for ch in (*_PROBES, *self.points, *other.points))


_NONE = _Chars()


def _one(test: Callable[[str], bool], *points: str) -> _Chars:
    return _Chars((test,), points)


def check_pattern(pattern: str, flags: int = 0) -> str | None:
    """None if `pattern` passes the screen, else what is wrong and how to fix it."""
    parsed = sre.parse(pattern, flags)
    guard = _Guard(bool(parsed.state.flags & re.IGNORECASE), bool(parsed.state.flags & re.DOTALL))
    return guard.sequence(list(parsed), after_free=True)


class _Guard:
    def __init__(self, ignore_case: bool, dotall: bool) -> None:
        self.ignore_case, self.dotall = ignore_case, dotall

    # -- the two rules --------------------------------------------------------------
    def sequence(self, items: list[Any], after_free: bool) -> str | None:
        """Check one sequence; `after_free`: what follows it can always match empty."""
        items = _flatten(items)
        for i, (op, av) in enumerate(items):
            rest_free = after_free and self.free(items[i + 1:])
            problem = self.inner(op, av, rest_free)
            if problem is None and op in _REPEATS and av[1] == c.MAXREPEAT:
                problem = self.adjacent(items, i, after_free)
            if problem is not None:
                return problem
        return None

    def adjacent(self, items: list[Any], i: int, after_free: bool) -> str | None:
        chars = self.chars([items[i]])
        for j in range(i + 1, len(items)):
            op, av = items[j]
            if (op in _REPEATS and av[1] == c.MAXREPEAT and self.first(av[2]).overlaps(chars)
                    and not (after_free and self.free(items[j + 1:]))):
                return ("two unbounded quantifiers can match the same characters with only "
                        "optional items between them, which backtracks polynomially")
            if not self.nullable([items[j]]):
                return None
        return None

    def loop(self, body: list[Any], after_free: bool) -> str | None:
        """An unbounded repeat: does a variable-length quantifier of one iteration reach one
        of the next (or a later one of its own) through optional items only?"""
        if after_free:
            return None
        once = _flatten(body)
        twice = once + once
        for i, (op, av) in enumerate(once):
            if op not in _REPEATS or av[1] == av[0]:
                continue
            chars = self.chars([once[i]])
            for op2, av2 in twice[i + 1:]:
                if op2 in _REPEATS and av2[1] != av2[0] and self.first(av2[2]).overlaps(chars):
                    return ("a quantifier inside an unbounded repeat can match what the next "
                            "iteration matches (nested quantifiers), which backtracks "
                            "exponentially")
                if not self.nullable([(op2, av2)]):
                    break
        return None

    def inner(self, op: Any, av: Any, rest_free: bool) -> str | None:
        """Check inside one item (groups, repeats, alternatives, lookarounds)."""
        if op in _REPEATS:
            if av[1] == c.MAXREPEAT:
                return self.loop(list(av[2]), rest_free) or self.sequence(list(av[2]), rest_free)
            return self.sequence(list(av[2]), rest_free)
        if op in (c.POSSESSIVE_REPEAT,):
            return self.sequence(list(av[2]), True)
        if op is c.ATOMIC_GROUP:
            return self.sequence(list(av), True)
        if op is c.BRANCH:
            return next(filter(None, (self.sequence(list(b), rest_free) for b in av[1])), None)
        if op in (c.ASSERT, c.ASSERT_NOT):
            return self.sequence(list(av[1]), True)
        return None

    # -- properties of items --------------------------------------------------------
    def nullable(self, items: list[Any]) -> bool:
        return all(self._nullable(op, av) for op, av in items)

    def _nullable(self, op: Any, av: Any) -> bool:
        if op in (*_REPEATS, c.POSSESSIVE_REPEAT):
            return av[0] == 0 or self.nullable(list(av[2]))
        if op is c.SUBPATTERN:
            return self.nullable(list(av[3]))
        if op is c.ATOMIC_GROUP:
            return self.nullable(list(av))
        if op is c.BRANCH:
            return any(self.nullable(list(b)) for b in av[1])
        return op in (c.AT, c.ASSERT, c.ASSERT_NOT, c.GROUPREF, c.GROUPREF_EXISTS)

    def free(self, items: list[Any]) -> bool:
        """These items can always match the empty string: nothing in them can fail."""
        for op, av in items:
            if op in (*_REPEATS, c.POSSESSIVE_REPEAT) and av[0] == 0:
                continue
            if op is c.SUBPATTERN and self.free(list(av[3])):
                continue
            return False
        return True

    def first(self, items: Any) -> _Chars:
        """The characters the items can start with."""
        out = _NONE
        for op, av in _flatten(list(items)):
            out = out | self.chars([(op, av)], first_only=True)
            if not self._nullable(op, av):
                break
        return out

    def chars(self, items: list[Any], first_only: bool = False) -> _Chars:
        """The characters the items can match (or start with, with `first_only`)."""
        out = _NONE
        for op, av in items:
            if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
                out = out | self._single(op, av)
            elif op in (*_REPEATS, c.POSSESSIVE_REPEAT):
                out = out | (self.first(av[2]) if first_only else self.chars(list(av[2])))
            elif op is c.SUBPATTERN:
                out = out | self._inner_chars(list(av[3]), first_only)
            elif op is c.ATOMIC_GROUP:
                out = out | self._inner_chars(list(av), first_only)
            elif op is c.BRANCH:
                for b in av[1]:
                    out = out | self._inner_chars(list(b), first_only)
            elif op in (c.GROUPREF, c.GROUPREF_EXISTS):
                out = out | _one(lambda ch: True)
        return out

    def _inner_chars(self, items: list[Any], first_only: bool) -> _Chars:
        return self.first(items) if first_only else self.chars(items)

    def _single(self, op: Any, av: Any) -> _Chars:
        if op is c.LITERAL:
            return self._cased(_one(lambda ch: ord(ch) == av, chr(av)))
        if op is c.NOT_LITERAL:
            return _one(lambda ch: ord(ch) != av, chr(av))
        if op is c.ANY:
            return _one(lambda ch: self.dotall or ch != "\n")
        negate = bool(av) and av[0][0] is c.NEGATE
        parts = [self._member(o, a) for o, a in (av[1:] if negate else av)]
        union = _NONE
        for part in parts:
            union = union | part
        union = self._cased(union)
        return _Chars((lambda ch: not union.test(ch),), union.points) if negate else union

    def _member(self, op: Any, av: Any) -> _Chars:
        if op is c.LITERAL:
            return _one(lambda ch: ord(ch) == av, chr(av))
        if op is c.RANGE:
            return _one(lambda ch: av[0] <= ord(ch) <= av[1], chr(av[0]), chr(av[1]))
        name = str(op if op is not c.CATEGORY else av)
        for cat, test in _CATEGORIES.items():
            if name == str(cat):
                return _one(test)
            if name == str(cat).replace("CATEGORY_", "CATEGORY_NOT_"):
                return _one(lambda ch, t=test: not t(ch))
        return _one(lambda ch: True)  # anything else: assume it may overlap

    def _cased(self, chars: _Chars) -> _Chars:
        if not self.ignore_case:
            return chars
        return _Chars((lambda ch: chars.test(ch) or chars.test(ch.lower())
                       or chars.test(ch.upper()),), chars.points)


def _flatten(items: list[Any]) -> list[Any]:
    """Inline plain groups `(...)`/`(?:...)` so their items sit in the enclosing sequence."""
    out: list[Any] = []
    for op, av in items:
        if op is c.SUBPATTERN:
            out.extend(_flatten(list(av[3])))
        else:
            out.append((op, av))
    return out


def refusal(problem: str) -> str:
    """The one-line load error for a refused pattern."""
    return (f"regex can backtrack catastrophically on long text: {problem}; make the "
            "quantifiers possessive (*+, ++, ?+) or atomic ((?>...)) where that keeps the "
            "meaning")
