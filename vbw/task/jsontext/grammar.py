"""JSON's grammar as Python's json module accepts it, in regexes that never backtrack far.

How it works and why: docs/design.md, section vbw.task.jsontext.grammar.
"""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

FLAT_LEVELS = 2
POSSESSIVE = sys.version_info >= (3, 11)  # Python's re has possessive quantifiers from 3.11
OBJ_START, OBJ_NEXT, ARR_START, ARR_NEXT = range(4)  # a step's state, its index in steps
OPENER_KEY, OPENER_ARRAYS, OPENER_OBJECT = 1, 2, 3   # OPENER's groups k, a and o


class Grammar(NamedTuple):
    """The compiled regexes the scanner uses (see the module-level names below)."""

    shallow_steps: tuple[re.Pattern[str], ...]
    deep_steps: tuple[re.Pattern[str], ...]
    opener: re.Pattern[str]
    candidate: re.Pattern[str]
    plausible: re.Pattern[str]
    empty_object: re.Pattern[str]


def grammar(possessive: bool) -> Grammar:
    """The grammar's regexes, with possessive quantifiers (Python 3.11+) or without."""
    p = "+" if possessive else ""
    ws = rf"[ \t\n\r]*{p}"
    plain = rf'[^"\\\x00-\x1f]*{p}'
    string = rf'"{plain}(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{{4}}){plain})*{p}"'
    num = rf"-?{p}(?:0|[1-9][0-9]*{p})(?:\.[0-9]+{p})?{p}(?:[eE][-+]?{p}[0-9]+{p})?{p}"
    scalar = rf"(?:{string}|{num}|true|false|null|NaN|Infinity|-Infinity)"
    key = rf"{string}{ws}:{ws}"

    def atomic_run(unit: str) -> str:
        """`unit` repeated as often as it matches, never given back (module docstring)."""
        return rf"(?:{unit})*+" if possessive else rf"(?=(?P<r>(?:{unit})*))(?P=r)"

    def opener(tag: str = "") -> str:
        """An object opener (group o), or a run of array openers (group a), with `tag`."""
        return rf"(?P<o{tag}>\{{)|(?P<a{tag}>\[(?:{ws}\[)*{p})"

    def flat_value(levels: int) -> str:
        """A complete JSON value holding containers at most `levels` deep (0: a scalar)."""
        value = scalar
        for _ in range(levels):
            arr = rf"\[{ws}(?:{value}(?:{ws},{ws}{value})*{p}{ws})?\]"
            obj = rf"\{{{ws}(?:{key}{value}(?:{ws},{ws}{key}{value})*{p}{ws})?\}}"
            value = rf"(?:{scalar}|{arr}|{obj})"
        return value

    def steps(value: str) -> tuple[re.Pattern[str], ...]:
        """The four step regexes for flat values `value`, indexed by state: just after `{`,
        after an object member, just after `[`, after an array element. A step reads every
        flat member or element up to where the container closes (group c) or a deeper
        object or run of arrays opens (o / a); c_, o_, a_ are the same after a first flat
        value."""

        def obj_rest(tag: str) -> str:
            return (rf"{atomic_run(rf'{ws},{ws}{key}{value}')}{ws}"
                    rf"(?:(?P<c{tag}>\}})|,{ws}{key}(?:{opener(tag)}))")

        def arr_rest(tag: str) -> str:
            return (rf"{atomic_run(rf'{ws},{ws}{value}')}{ws}"
                    rf"(?:(?P<c{tag}>\])|,{ws}(?:{opener(tag)}))")

        return (
            re.compile(rf"{ws}(?:(?P<c>\}})|{key}(?:{value}{obj_rest('_')}|{opener()}))"),
            re.compile(obj_rest("")),
            re.compile(rf"{ws}(?:(?P<c>\])|{value}{arr_rest('_')}|{opener()})"),
            re.compile(arr_rest("")),
        )

    flat = flat_value(FLAT_LEVELS)
    # A member value that is not flat opens a deeper object, or a run of arrays whose first
    # element is `]`, a deeper object, or a flat value followed by `,` or `]`: anything
    # else after a run of `[` cannot be JSON. (Without this, `{"k":[[[1 x` x N sent every
    # `{` to the Python-level parse.)
    deep = rf"(?:\{{|\[(?:{ws}\[)*{p}{ws}(?:\]|\{{|{flat}{ws}[,\]]))"
    return Grammar(
        shallow_steps=steps(flat),  # while FLAT_LEVELS more levels cannot reach the limit
        deep_steps=steps(scalar),   # near it: every container is a step, so depth is exact
        # A run of openers ("a":[[{"b":[{...): each unit is an optional key, then a run of
        # array openers, an object opener, or both; one match per unit.
        opener=re.compile(rf"(?:(?<=\{{){ws}(?P<k>{string}){ws}:{ws}|(?<=\[){ws})(?=[\[{{])"
                          rf"(?P<a>\[(?:{ws}\[)*{p})?{p}(?:{ws}(?P<o>\{{))?{p}"),
        candidate=re.compile(rf'\{{{ws}["}}]'),
        # A `{` can open an object only if its first members parse up to `}` or a deeper
        # opener.
        plausible=re.compile(rf"\{{{ws}(?:\}}|{key}(?:{flat}"
                             rf"{atomic_run(rf'{ws},{ws}{key}{flat}')}{ws}"
                             rf"(?:\}}|,{ws}{key}{deep})|(?!{flat}){deep}))"),
        empty_object=re.compile(rf"\{{{ws}\}}"),
    )


# The compiled grammar, by the names the scanner reads, built on first use (PEP 562): its
# patterns are tens of kilobytes that Python's re parses in pure Python (~0.1 s), and most
# texts never need them (vbw.task.jsontext.scan tries orjson on the whole text first), so a run
# whose texts are all plain JSON objects, or that re-scores no JSON arm, never pays it.
_EXPORTED = ("SHALLOW_STEPS", "DEEP_STEPS", "OPENER", "CANDIDATE", "PLAUSIBLE", "EMPTY_OBJECT")


def __getattr__(name: str) -> object:
    if name not in _EXPORTED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals().update(zip(_EXPORTED, grammar(POSSESSIVE)))  # later reads skip this hook
    return globals()[name]
