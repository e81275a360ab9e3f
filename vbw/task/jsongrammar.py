"""JSON's grammar as Python's json module accepts it, in possessive regexes (no backtracking).

Exactly what `json.JSONDecoder().raw_decode` accepts: strict strings (no raw control
characters; escapes `\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`, lone surrogates allowed), numbers
`-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?` with ASCII digits only (a `.` or `e` not
followed by a digit ends the number), `true false null NaN Infinity -Infinity`, and only
space, tab, LF and CR as whitespace. The scanner in vbw.task.jsonscan walks these one step
at a time; each step regex consumes a whole run of "flat" members or elements (values
nested at most FLAT_LEVELS deep) at C speed and stops where a deeper container opens.

Linear without possessive quantifiers (Python 3.11+ only), on any Python 3: the grammar is
written so that backtracking never finds a second way. Wherever a quantifier or an
alternative may give text back, what comes next cannot start with the character given back
(whitespace before punctuation, digits before `.`/`e`/punctuation, `,` before `]`/`}`), so
a give-back fails at its first character, after at most a run of whitespace; a string is
the unrolled loop `"plain*(escape plain*)*"`, whose plain runs stop at `\\` or `"`. So a
greedy quantifier here matches exactly what a possessive one would, in the same time up to
a constant. The one place where giving text back could succeed is a step's run of flat
members: giving back `,"k":{...}` leaves `,"k":` then `{`, an opener, so the step would
stop earlier and the next step would read the rest again (quadratic over `"k":{}` x N).
That run is atomic: `(?=(?P<r>RUN))(?P=r)`, a lookahead (which Python's re never
re-enters) whose text is then consumed by a backreference, the classic emulation of an
atomic group, identical in meaning to the possessive `RUN*+` it replaces.
"""

from __future__ import annotations

import re

FLAT_LEVELS = 2

WS = r"[ \t\n\r]*"
_PLAIN = r'[^"\\\x00-\x1f]*'
STR = rf'"{_PLAIN}(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{{4}}){_PLAIN})*"'
NUM = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
SCALAR = rf"(?:{STR}|{NUM}|true|false|null|NaN|Infinity|-Infinity)"
KEY = rf"{STR}{WS}:{WS}"


def _open(tag: str = "") -> str:
    """An object opener (group o), or a run of array openers (group a), named with `tag`."""
    return rf"(?P<o{tag}>\{{)|(?P<a{tag}>\[(?:{WS}\[)*)"


def atomic_run(unit: str) -> str:
    """`unit` repeated as often as it matches, never given back (module docstring): what
    `(?:unit)*+` means, in a group named r (one per compiled pattern)."""
    return rf"(?=(?P<r>(?:{unit})*))(?P=r)"


def flat_value(levels: int) -> str:
    """A complete JSON value holding containers at most `levels` deep (0: a scalar)."""
    value = SCALAR
    for _ in range(levels):
        arr = rf"\[{WS}(?:{value}(?:{WS},{WS}{value})*{WS})?\]"
        obj = rf"\{{{WS}(?:{KEY}{value}(?:{WS},{WS}{KEY}{value})*{WS})?\}}"
        value = rf"(?:{SCALAR}|{arr}|{obj})"
    return value


def steps(value: str) -> tuple[re.Pattern[str], ...]:
    """The four step regexes for flat values `value`, indexed by state: just after `{`,
    after an object member, just after `[`, after an array element. A step reads every flat
    member or element up to where the container closes (group c) or a deeper object or run
    of arrays opens (o / a); c_, o_, a_ are the same after a first flat value."""

    def obj_rest(tag: str) -> str:
        return (rf"{atomic_run(rf'{WS},{WS}{KEY}{value}')}{WS}"
                rf"(?:(?P<c{tag}>\}})|,{WS}{KEY}(?:{_open(tag)}))")

    def arr_rest(tag: str) -> str:
        return (rf"{atomic_run(rf'{WS},{WS}{value}')}{WS}"
                rf"(?:(?P<c{tag}>\])|,{WS}(?:{_open(tag)}))")

    return (
        re.compile(rf"{WS}(?:(?P<c>\}})|{KEY}(?:{value}{obj_rest('_')}|{_open()}))"),
        re.compile(obj_rest("")),
        re.compile(rf"{WS}(?:(?P<c>\])|{value}{arr_rest('_')}|{_open()})"),
        re.compile(arr_rest("")),
    )


OBJ_START, OBJ_NEXT, ARR_START, ARR_NEXT = range(4)
FLAT = flat_value(FLAT_LEVELS)
SHALLOW_STEPS = steps(FLAT)      # while FLAT_LEVELS more levels cannot reach the depth limit
DEEP_STEPS = steps(SCALAR)       # near it: every container is a step, so depth is exact

# A run of openers ("a":[[{"b":[{...): each unit is an optional key, then a run of array
# openers, an object opener, or both; the scanner reads a whole run in one match per unit.
OPENER = re.compile(rf"(?:(?<=\{{){WS}(?P<k>{STR}){WS}:{WS}|(?<=\[){WS})(?=[\[{{])"
                    rf"(?P<a>\[(?:{WS}\[)*)?(?:{WS}(?P<o>\{{))?")
OPENER_KEY, OPENER_ARRAYS, OPENER_OBJECT = 1, 2, 3  # the groups k, a and o

# A member value that is not flat opens a deeper object, or a run of arrays whose first
# element is `]`, a deeper object, or a flat value followed by `,` or `]`: anything else
# after a run of `[` cannot be JSON. (Without this, `{"k":[[[1 x` x N sent every `{` to
# the Python-level parse.)
DEEP = rf"(?:\{{|\[(?:{WS}\[)*{WS}(?:\]|\{{|{FLAT}{WS}[,\]]))"
# A `{` can open an object only if its first members parse up to `}` or a deeper opener.
CANDIDATE = re.compile(rf'\{{{WS}["}}]')
_MEMBERS = atomic_run(rf"{WS},{WS}{KEY}{FLAT}")
PLAUSIBLE = re.compile(rf"\{{{WS}(?:\}}|{KEY}(?:{FLAT}{_MEMBERS}{WS}"
                       rf"(?:\}}|,{WS}{KEY}{DEEP})|(?!{FLAT}){DEEP}))")
EMPTY_OBJECT = re.compile(rf"\{{{WS}\}}")
