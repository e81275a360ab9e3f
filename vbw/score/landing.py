"""Where a constraint's intervention landed in an arm's final text.

A replay records each intervention with `char`, the offset of the forced token in the
arm's text (vbw.replay.format.Intervention); what part of the JSON that token became is
derived here, at scoring, so the report's numbers follow from the text and the task alone.

How it works and why: docs/design.md, section vbw.score.landing.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate
from typing import NamedTuple

import jmespath.exceptions
import jmespath.parser

from vbw.task.jsontext.scan import first_json_span

STRUCTURE, KEY, VALUE = "structure", "key", "value"
_VALUE, _KEY, _ANSWER = 1, 2, 4  # a segment's code bits
Step = str | int

# one token per match: whitespace, a string (closed or cut off by the end), a number or
# literal run, one punctuation character, or one other character
_TOKEN = re.compile(r'(?P<w>[ \t\n\r]+)|(?P<s>"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z))'
                    r'|(?P<n>[-+0-9.eE]+|true|false|null|NaN|Infinity)'
                    r'|(?P<p>[{}\[\],:])|(?P<o>.)', re.DOTALL)


class Landing(NamedTuple):
    where: str            # STRUCTURE, KEY or VALUE (see the module docstring)
    answer: bool | None   # in the answer value; None: unknown (path not locatable)


@lru_cache(maxsize=64)
def answer_steps(path: str) -> tuple[Step, ...] | None:
    """The JMESPath as member names and indices (`@`: ()), or None if it is not such a
    plain path (then where the answer lies is not known)."""
    try:
        node = jmespath.parser.Parser().parse(path).parsed
    except jmespath.exceptions.JMESPathError:
        return None
    out: list[Step] = []
    todo = [node]
    while todo:
        n = todo.pop()
        kind = n.get("type")
        if kind == "current":
            continue
        if kind == "field":
            out.append(n["value"])
        elif kind == "subexpression":
            todo.extend(reversed(n["children"]))
        elif kind == "index_expression" and n["children"][1].get("type") == "index" \
                and n["children"][1]["value"] >= 0:
            todo.extend([n["children"][1], n["children"][0]])
        elif kind == "index":
            out.append(int(n["value"]))
        else:
            return None
    return tuple(out)


class _Frame:
    """An open container: its kind, the current member name or index, whether the path
    down to that member matches the answer path, and whether the next string is a name."""

    __slots__ = ("obj", "step", "ok", "expect_key", "answer")

    def __init__(self, obj: bool, ok: bool, answer: bool) -> None:
        self.obj, self.step, self.ok = obj, (None if obj else 0), ok
        self.expect_key, self.answer = obj, answer


class TextMap:
    """The key and value segments of one text, sorted, with prefix counts (see classify)."""

    def __init__(self, text: str, steps: tuple[Step, ...] | None, stop: int) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.codes: list[int] = []  # per segment: _VALUE or _KEY, plus _ANSWER
        self.locatable = steps is not None
        span = first_json_span(text)
        if span is None:
            first = text.find("{")
            if first >= 0:
                self._scan(text, first, len(text), None, stop)
        else:
            self._scan(text, span[0], span[1], steps, stop)
        # prefix counts over the segments, for O(log n) per landing on any text
        self.values = [0, *accumulate(c & _VALUE for c in self.codes)]
        self.keys = [0, *accumulate((c & _KEY) >> 1 for c in self.codes)]
        # in the answer: any segment inside its text, member names of an answer object
        # included (a forced parameter name changes a call's arguments)
        self.answers = [0, *accumulate(c >> 2 for c in self.codes)]

    def _add(self, a: int, b: int, code: int) -> None:
        if b > a:
            self.starts.append(a)
            self.ends.append(b)
            self.codes.append(code)

    def _scan(self, text: str, start: int, end: int, steps: tuple[Step, ...] | None,
              stop: int) -> None:
        """Segments of text[start:end] up to `stop`: a character's class and answer flag
        depend only on the text before it, so no token starting at `stop` or later can
        change a landing before it."""
        stack: list[_Frame] = []
        depth_want = -1 if steps is None else len(steps)
        for m in _TOKEN.finditer(text, start, end):
            kind, a, b = m.lastgroup, m.start(), m.end()
            if a >= stop:
                break
            if kind == "w":
                continue
            top = stack[-1] if stack else None
            if top is not None and top.obj and top.expect_key and kind == "s":
                self._key(text, top, stack, steps, a, b)
                continue
            inside = top.answer if top is not None else False
            if kind == "p":
                ch = text[a]
                if ch in "{[":
                    here = self._here(stack, depth_want)
                    stack.append(_Frame(ch == "{", False, inside or here))
                    self._reset_ok(stack, steps)
                elif ch in "}]":
                    if stack:
                        stack.pop()
                    if not stack:
                        break
                elif ch == ":" and top is not None and top.obj:
                    top.expect_key = False
                elif ch == "," and top is not None:
                    if top.obj:
                        top.expect_key = True
                        top.step, top.ok = None, False
                    else:
                        top.step = (top.step or 0) + 1
                        self._reset_ok(stack, steps)
                continue
            if kind in ("s", "n"):
                code = _VALUE | (_ANSWER if inside or self._here(stack, depth_want) else 0)
                if kind == "s":
                    self._add(a + 1, b - 1 if b - a > 1 and text[b - 1] == '"' else b, code)
                else:
                    self._add(a, b, code)
            if not stack:
                break  # a top-level scalar is the whole value

    def _key(self, text: str, top: _Frame, stack: list[_Frame],
             steps: tuple[Step, ...] | None, a: int, b: int) -> None:
        closed = b - a > 1 and text[b - 1] == '"'
        self._add(a + 1, b - 1 if closed else b, _KEY | (_ANSWER if top.answer else 0))
        top.step, top.ok = None, False
        if steps is not None and closed and len(stack) <= len(steps):
            parent_ok = len(stack) == 1 or stack[-2].ok
            want = steps[len(stack) - 1]
            if parent_ok and isinstance(want, str):
                if "\\" not in text[a:b]:
                    top.step = text[a + 1:b - 1]
                else:
                    try:
                        top.step = json.loads(text[a:b])
                    except ValueError:
                        top.step = None
                top.ok = top.step == want

    def _reset_ok(self, stack: list[_Frame], steps: tuple[Step, ...] | None) -> None:
        """The top frame's `ok` after its index changed (arrays) or it was opened."""
        top = stack[-1]
        if top.obj or steps is None or len(stack) > len(steps):
            top.ok = False
            return
        parent_ok = len(stack) == 1 or stack[-2].ok
        top.ok = parent_ok and steps[len(stack) - 1] == top.step

    def _here(self, stack: list[_Frame], depth_want: int) -> bool:
        """A value starting now is at the answer path (every duplicate is marked)."""
        if len(stack) != depth_want:
            return False
        return not stack or stack[-1].ok

    def landing(self, char: int, length: int) -> Landing:
        """The class of the token written at [char, char + length) (see the docstring)."""
        if length <= 0:
            return Landing(STRUCTURE, False if self.locatable else None)
        lo = bisect_right(self.ends, char)            # first segment ending after char
        hi = bisect_left(self.starts, char + length)  # segments starting before the end
        if hi <= lo:
            return Landing(STRUCTURE, False if self.locatable else None)
        values = self.values[hi] - self.values[lo]
        keys = self.keys[hi] - self.keys[lo]
        answer = (self.answers[hi] - self.answers[lo]) > 0 if self.locatable else None
        return Landing(VALUE if values else KEY if keys else STRUCTURE, answer)


def classify(text: str | None, events: Sequence[tuple[int, int]],
             steps: tuple[Step, ...] | None) -> list[Landing]:
    """Each event's landing, `events` being (char, length of the forced token's text) and
    `steps` the answer path (answer_steps); an arm without text lands nowhere."""
    if not events:
        return []
    if text is None:
        return [Landing(STRUCTURE, False if steps is not None else None) for _ in events]
    where = TextMap(text, steps, max(c + n for c, n in events) + 1)
    return [where.landing(c, n) for c, n in events]


def counts(landings: Sequence[Landing]) -> tuple[int, int, int, int]:
    """(events, in a value, in a key, in the answer value (-1: unknown))."""
    answers = [x.answer for x in landings]
    unknown = any(a is None for a in answers)
    return (len(landings), sum(x.where == VALUE for x in landings),
            sum(x.where == KEY for x in landings), -1 if unknown else sum(map(bool, answers)))

