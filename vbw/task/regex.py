"""Every regex a task declares runs on RE2: matching time linear in the text, for any pattern.

How it works and why: docs/design.md, section vbw.task.regex.
"""

from __future__ import annotations

import re
from collections import deque
from functools import lru_cache
from collections.abc import Callable
from typing import Any

import re2

from vbw.task.regex_syntax import EOL, refusal, schema_regex, translate

# RE2's match call under the re2 module's Python layer (which builds a match object per
# match): used on ASCII text where the module exposes it, else the module decides.
try:
    _ANCHORS: tuple[Any, Any, Any] | None = (re2._re2.RE2.Anchor.UNANCHORED,
                                              re2._re2.RE2.Anchor.ANCHOR_BOTH,
                                              re2._re2.RE2.Anchor.ANCHOR_START)
except AttributeError:
    _ANCHORS = None
_NO_SPAN = (-1, -1)

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log every refusal on stderr: one line is ours
_SCAN_OPTIONS = re2.Options()  # `last`'s scan: where matches are, not what they capture
_SCAN_OPTIONS.log_errors = False
_SCAN_OPTIONS.never_capture = True
MAX_GROUPS = 100  # capture groups in a task regex

_RESERVED = re.compile(r"(?<!\\)\(\?P?<(vbw_\w*)>")  # group names vbw keeps
_SURROGATE = re.compile("[\ud800-\udfff]")  # fixed and linear: one character each


class Regex:
    """A compiled task or schema regex. A match is read as (start, end) spans per group of
    the pattern as written, in characters of the text; values are slices of the text.

    Python's `$` (no MULTILINE) is zero-width before a final newline; its translation takes
    that newline in a group of its own. When it did, the match ends at the end of the text
    and everything from that newline on matched empty, so every span boundary at the end
    moves back onto the newline: the spans Python gives, and a fullmatch is no match."""

    __slots__ = ("_rx", "groups", "_user", "_eol", "_match", "_scan", "_whole")

    def __init__(self, rx: Any, scan: Any = None, whole: Regex | None = None) -> None:
        """`scan`: the pattern compiled without captures, which `last` scans with (RE2's
        cost per match grows with the groups); `whole`: the pattern with `$` as `\\z`,
        which `fullmatch` matches with (a match of the whole text ends at its end)."""
        self._rx = rx
        names = {i: name for name, i in rx.groupindex.items()}
        self._eol = [i for i, name in names.items() if name.startswith(EOL)]
        self._user = [0] + [i for i in range(1, rx.groups + 1) if i not in self._eol]
        self.groups: int = len(self._user) - 1
        native = getattr(rx, "_regexp", None) if _ANCHORS is not None else None
        self._match = getattr(native, "Match", None)
        self._scan = scan if rx.groups else None
        self._whole = whole

    def search(self, text: str) -> list[tuple[int, int]] | None:
        data = _encodable(text)
        if self._match is not None and type(data) is bytes:
            found = self._match(_ANCHORS[0], data, 0, len(data))
            return None if found[0] == _NO_SPAN else self._spans(found.__getitem__)
        m = self._rx.search(data)
        return None if m is None else self._spans(m.span)

    def fullmatch(self, text: str) -> bool:
        if self._whole is not None:
            return self._whole.fullmatch(text)
        data = _encodable(text)
        if self._match is not None and type(data) is bytes:
            found = self._match(_ANCHORS[1], data, 0, len(data))
            return found[0] != _NO_SPAN and not self._took_newline(found.__getitem__)
        m = self._rx.fullmatch(data)
        return m is not None and not self._took_newline(m.span)

    def last(self, text: str) -> list[tuple[int, int]] | None:
        """The last match of a left-to-right scan of non-overlapping matches."""
        data = _encodable(text)
        if self._scan is not None:  # where the last match starts, then its groups
            start = self._last_start(data)
            if start is None:
                return None
            if self._match is not None and type(data) is bytes:
                found = self._match(_ANCHORS[2], data, start, len(data))
                return self._spans(found.__getitem__)
            m = self._rx.match(data, start)
            return None if m is None else self._spans(m.span)
        if self._match is not None and type(data) is bytes:
            found = self._last_bytes(data)
            return None if found is None else self._spans(found.__getitem__)
        m = next(iter(deque(self._rx.finditer(data), maxlen=1)), None)
        return None if m is None else self._spans(m.span)

    def _last_start(self, data: str | bytes) -> int | None:
        """Where the last match of the scan starts, found without captures."""
        if type(data) is bytes and self._scan._match is not None:
            found = self._scan._last_bytes(data)
            return None if found is None else found[0][0]
        m = next(iter(deque(self._scan._rx.finditer(data), maxlen=1)), None)
        return None if m is None else m.start()

    def _last_bytes(self, data: bytes) -> Any:
        """`last` on ASCII text, by RE2's own match call: the scan the re2 module's
        finditer makes on bytes (after an empty match, one byte on), without building a
        match object per match (a free-text chain scans every text of an arm)."""
        match, unanchored, pos, end, found = self._match, _ANCHORS[0], 0, len(data), None
        while True:
            spans = match(unanchored, data, pos, end)
            if spans[0] == _NO_SPAN:
                return found
            found = spans
            if pos == end:
                return found
            pos = pos + 1 if pos == spans[0][1] else spans[0][1]

    def _took_newline(self, span: Callable[[int], tuple[int, int]]) -> bool:
        return any(span(g)[0] >= 0 for g in self._eol)

    def _spans(self, span: Callable[[int], tuple[int, int]]) -> list[tuple[int, int]]:
        """The user groups' spans of a match whose group spans `span` gives."""
        spans = [span(g) for g in self._user]
        if self._took_newline(span):
            end = span(0)[1]
            spans = [(min(a, end - 1), min(b, end - 1)) if a >= 0 else (a, b)
                     for a, b in spans]
        return spans


def _encodable(text: str) -> str | bytes:
    """What RE2 reads for `text`, with spans in characters of `text`: ASCII text as bytes
    (byte and character offsets agree, so none is converted), else the text with lone
    surrogates (which UTF-8 cannot carry) replaced one for one."""
    if text.isascii():
        return text.encode("ascii")
    return _SURROGATE.sub("\ufffd", text)


def _compiled(pattern: str, options: Any = _OPTIONS) -> Any:
    """re2.compile; ValueError with the one-line refusal."""
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        raw = e.args[0] if e.args else b""
        problem = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise ValueError(refusal(pattern, problem)) from None


@lru_cache(maxsize=512)
def compile_re2(pattern: str) -> Regex:
    """Compile an RE2 pattern as is; ValueError with the one-line refusal."""
    return Regex(_compiled(pattern))


@lru_cache(maxsize=512)
def compile_task_regex(pattern: str, flags: tuple[str, ...] = ()) -> Regex:
    """A task pattern (Python meaning kept where RE2 can keep it), compiled once; at
    most MAX_GROUPS groups, none named vbw_* (vbw's own)."""
    reserved = _RESERVED.search(pattern)
    if reserved is not None:
        raise ValueError(f"group {reserved.group(1)!r}: group names starting with vbw_ "
                         "are reserved for vbw's translation; rename the group")
    rx = _compiled(translate(pattern, flags))
    regex = Regex(rx)
    if regex.groups > MAX_GROUPS:
        raise ValueError(f"the pattern has {regex.groups} capture groups, over "
                         f"{MAX_GROUPS}; use (?:...) for groups you do not read")
    whole = Regex(_compiled(translate(pattern, flags, eol=False))) if regex._eol else None
    scan = Regex(_compiled(translate(pattern, flags), _SCAN_OPTIONS))
    return Regex(rx, scan, whole)


@lru_cache(maxsize=512)
def compile_schema_regex(pattern: str) -> Regex:
    """A JSON Schema `pattern` or `patternProperties` key, compiled once."""
    return compile_re2(schema_regex(pattern))
