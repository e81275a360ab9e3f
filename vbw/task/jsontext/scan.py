"""The first JSON object in untrusted text, found in time linear in the text's length.

The rule (the demo-task spec's): try to decode a JSON value at each `{`, left to right; the
first decode that yields an object wins; nothing is stripped.

How it works and why: docs/design.md, section vbw.task.jsontext.scan.
"""

from __future__ import annotations

import heapq
import re
from typing import Any

import orjson

from vbw.task.jsontext import grammar as g
from vbw.task.jsontext.values import decode_at, decode_span_at, orjson_plain

MAX_DEPTH = 512
TRIES, BUDGET = 32, 4  # `{`s decoded literally before the search, text lengths read
NOTHING: tuple[int, int, Any] = (-1, -1, None)  # _tries: no `{` opens an object


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text`: the first `{`, left to right, at which a JSON value
    decodes and is an object (nested at most MAX_DEPTH deep)."""
    return first_json_object_plain(text)[0]


def first_json_object_plain(text: str) -> tuple[dict[str, Any] | None, bool | None]:
    """first_json_object's object, and whether it is plain (vbw.task.validity.plain),
    where the common case's walk (`_whole_object`) found out anyway; None: not known."""
    first = text.find("{")
    if first < 0:
        return None, None
    whole = _whole_object(text, first)
    if whole is not None:
        return whole
    return _found(text, first), None


def _found(text: str, first: int) -> dict[str, Any] | None:
    """first_json_object past the common case: the first `{`s tried, then the search."""
    hit = _tries(text, first)
    if hit is not None:
        return hit[2]
    start = _Search(text, MAX_DEPTH).run()
    if start is None:
        return None
    value = decode_at(text, start)
    return value if isinstance(value, dict) else None


def _whole_object(text: str, first: int) -> tuple[dict[str, Any], bool] | None:
    """The shortcut for the common case, a text that is one JSON object from its first `{`
    on (what a constrained arm writes): that `{` is the first candidate, so the object it
    opens is the answer when it decodes and is within MAX_DEPTH. orjson decodes it when
    the rest of the text is exactly that object; where orjson refuses (trailing text, NaN,
    lone surrogates), where the object holds a float that may be an integer beyond 64
    bits to json (vbw.task.jsontext.values.orjson_plain), or where the object is too deep,
    None: the search decides. Else (the object, whether it is plain:
    the same walk tells, and validity needs to know)."""
    try:
        value = orjson.loads(text[first:] if first else text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    plain = orjson_plain(value)
    if plain is None:
        return None  # (orjson turns integers beyond 64 bits into floats; json does not)
    if len(text) - first > 2 * MAX_DEPTH and _depth(value) > MAX_DEPTH:
        return None  # (a shorter text cannot nest deeper than MAX_DEPTH)
    return value, plain


def _tries(text: str, first: int) -> tuple[int, int, Any] | None:
    """The rule done literally on the first TRIES `{`s: json decodes at each in turn, and
    the first object within MAX_DEPTH is the answer, as (start, end, object); NOTHING when
    the text's `{`s run out first; None (undecided: the search decides) after TRIES
    failures, after the tries have read BUDGET times the text (a failed decode costs up to
    where it failed, its error message as much again), or where the decoder hits its
    recursion limit. So a text pays a bounded number of linear passes here, and most texts
    (an object after prose, or a cut-off one whose first complete object is a few `{`s in)
    are decided without the search, whose grammar then never compiles."""
    pos, spent, budget = first, 0, BUDGET * len(text) + (1 << 16)
    for _ in range(TRIES):
        try:
            value, end = decode_span_at(text, pos)
        except RecursionError:
            return None
        except ValueError as e:
            spent += 2 * getattr(e, "pos", len(text))
        else:
            if end - pos <= 2 * MAX_DEPTH or _depth(value) <= MAX_DEPTH:
                return pos, end, value
            spent += 2 * end
        pos = text.find("{", pos + 1)
        if pos < 0:
            return NOTHING
        if spent > budget:
            return None
    return None


def _depth(value: Any) -> int:
    """Levels of objects and arrays, counting `value` itself."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def first_json_span(text: str) -> tuple[int, int] | None:
    """Where first_json_object's object lies in `text` (start, end), or None."""
    first = text.find("{")
    if first < 0:
        return None
    if _whole_object(text, first) is not None:  # the text is that object (and whitespace)
        return first, len(text.rstrip(" \t\n\r"))
    hit = _tries(text, first)
    if hit is not None:
        return None if hit is NOTHING else hit[:2]
    start = _Search(text, MAX_DEPTH).run()
    if start is None:
        return None
    value, end = decode_span_at(text, start)
    return (start, end) if isinstance(value, dict) else None


class _Search:
    """One search: the smallest known success, and the `{`s still to try. A frame of the
    parse stack is [position, is_object, height, deepest height inside]; only the top
    max_depth + 1 frames are kept (any below are too deep to be objects within the limit)."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.max_depth = max_depth
        self.shallow = max_depth - g.FLAT_LEVELS  # up to this many open frames, flat
        empty = g.EMPTY_OBJECT.search(text)       # values cannot reach the depth limit
        self.best: int | None = empty.start() if empty else None
        self.frontier = 0        # every `{` before it is decided or queued
        self.queue: list[tuple[int, int]] = []  # (candidate, end of the span it came from)
        self.decided = bytearray(len(text))
        self._ahead = -1         # the first plausible `{` at or after the frontier

    def run(self) -> int | None:
        while True:
            start = self._next()
            if start is None or (self.best is not None and start >= self.best):
                return self.best
            if self._parse(start):
                return start

    def _next(self) -> int | None:
        """The smallest undecided `{` that could open an object."""
        text = self.text
        if self._ahead < self.frontier:
            m = g.PLAUSIBLE.search(text, self.frontier)
            self._ahead = m.start() if m else len(text)
        while self.queue and self.queue[0][0] < self._ahead:
            pos = self._pop()
            if not self.decided[pos] and g.PLAUSIBLE.match(text, pos):
                return pos
            self.decided[pos] = 1
        return self._ahead if self._ahead < len(text) else None

    def _pop(self) -> int:
        pos, end = heapq.heappop(self.queue)
        self._enqueue(pos + 1, end)
        return pos

    def _enqueue(self, a: int, b: int) -> None:
        """Queue the first `{` in text[a:b] (values the parse read as flat) that could open
        an object: one inside a string, or a nested object the parse did not step into."""
        if self.best is not None and a >= self.best:
            return
        m = g.CANDIDATE.search(self.text, a, b)
        if m is not None and (self.best is None or m.start() < self.best):
            heapq.heappush(self.queue, (m.start(), b))

    def _stop(self, pos: int) -> bool:
        self.frontier = max(self.frontier, pos)
        return False

    def _parse(self, start: int) -> bool:
        """Parse from the `{` at `start`; True if its object closes within max_depth."""
        text, shallow, enqueue = self.text, self.shallow, self._enqueue
        room, shallow_steps, deep_steps = self.max_depth + 1, g.SHALLOW_STEPS, g.DEEP_STEPS
        stack: list[list[Any]] = [[start, True, 1, 1]]
        self.decided[start] = 1
        pos, state = start + 1, g.OBJ_START
        while True:
            steps = shallow_steps if len(stack) <= shallow else deep_steps
            m = steps[state].match(text, pos)
            if m is None:
                return self._stop(pos)
            end, how = m.end(), m.lastgroup[0]  # type: ignore[index]
            if how == "c":
                enqueue(pos, end)
                closed = self._close(stack, start)
                if closed is not None:
                    return closed or self._stop(end)
                state = g.OBJ_NEXT if stack[-1][1] else g.ARR_NEXT
            elif how == "a":
                run = m.start(m.lastgroup)  # type: ignore[arg-type]
                enqueue(pos, run)
                self._push_arrays(stack, 1 if end - run == 1 else text.count("[", run, end))
                state = g.ARR_START
            else:
                enqueue(pos, end - 1)
                height = stack[-1][2] + 1
                stack.append([end - 1, True, height, height])
                if len(stack) > room:
                    del stack[0]  # too deep to be an object within max_depth
                self.decided[end - 1] = 1
                unit = g.OPENER.match(text, end)
                if unit is not None:
                    end = self._openers(stack, unit)
                state = g.OBJ_START if stack[-1][1] else g.ARR_START
            pos = end

    def _close(self, stack: list[list[Any]], start: int) -> bool | None:
        """Pop the top frame. True: the start's object closed (a success); False: the parse
        is over (the start's object closed too deep, or its parent was dropped as too deep
        to matter); None: go on."""
        frame = stack.pop()
        if frame[1] and frame[3] - frame[2] < self.max_depth:
            if frame[0] == start:
                return True
            if self.best is None or frame[0] < self.best:
                self.best = frame[0]
        if not stack:
            return False
        parent = stack[-1]
        parent[3] = max(parent[3], frame[3])
        return None

    def _openers(self, stack: list[list[Any]], first: re.Match[str]) -> int:
        """Push the run of openers (units of g.OPENER) that starts with `first`, right after
        the opener on top of the stack; the position after them. Array runs are counted."""
        text, decided = self.text, self.decided
        if g.OPENER.match(text, first.end()) is None:
            return self._push_unit(stack, first)
        units: list[int] = []  # an object opener's position, or minus an array run's length
        frames = objects = 0
        begin = end = first.start()
        for m in iter(g.OPENER.scanner(text, begin).match, None):
            s, e = m.span(g.OPENER_ARRAYS)
            if s >= 0:
                n = 1 if e - s == 1 else text.count("[", s, e)
                units.append(-n)
                frames += n
            end = m.end()
            if m.lastindex == g.OPENER_OBJECT:
                decided[end - 1] = 1
                units.append(end - 1)
                objects += 1
        if text.count("{", begin, end) > objects:  # some key holds a `{`: queue those keys
            for m in iter(g.OPENER.scanner(text, begin, end).match, None):
                if m.start(g.OPENER_KEY) >= 0:
                    self._enqueue(*m.span(g.OPENER_KEY))
        self._push(stack, units, frames + objects)
        return end

    def _push_unit(self, stack: list[list[Any]], m: re.Match[str]) -> int:
        """_openers for a run of one unit, without the bookkeeping of a long run."""
        if m.start(g.OPENER_KEY) >= 0:
            self._enqueue(*m.span(g.OPENER_KEY))
        s, e = m.span(g.OPENER_ARRAYS)
        if s >= 0:
            self._push_arrays(stack, 1 if e - s == 1 else self.text.count("[", s, e))
        if m.lastindex == g.OPENER_OBJECT:
            self.decided[m.end() - 1] = 1
            height = stack[-1][2] + 1
            stack.append([m.end() - 1, True, height, height])
            if len(stack) > self.max_depth + 1:
                del stack[0]
        return m.end()

    def _push_arrays(self, stack: list[list[Any]], n: int) -> None:
        """Push `n` array frames; only the top max_depth + 1 frames are kept."""
        height = stack[-1][2]
        for h in range(height + max(1, n - self.max_depth), height + n + 1):
            stack.append([-1, False, h, h])
        if len(stack) > self.max_depth + 1:
            del stack[:len(stack) - self.max_depth - 1]

    def _push(self, stack: list[list[Any]], units: list[int], count: int) -> None:
        """Push the `count` frames of `units`, bottom to top; only the top max_depth + 1
        are kept."""
        top = stack[-1][2] + count
        frames: list[list[Any]] = []
        room = self.max_depth + 1
        for unit in reversed(units):
            for _ in range(min(max(-unit, 1), room - len(frames))):
                frames.append([unit, unit >= 0, top, top])
                top -= 1
            if len(frames) >= room:
                break
        stack.extend(reversed(frames))
        if len(stack) > room:
            del stack[:len(stack) - room]
