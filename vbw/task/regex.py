"""Every regex a task declares runs on RE2: matching time linear in the text, for any pattern.

How it works and why: docs/design.md, section vbw.task.regex.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from functools import lru_cache
from collections.abc import Callable
from typing import Any, Iterable

import re2

# RE2's match call under the re2 module's Python layer (which builds a match object per
# match): used on ASCII text where the module exposes it, else the module decides.
try:
    _ANCHORS: tuple[Any, Any, Any] | None = (re2._re2.RE2.Anchor.UNANCHORED,
                                              re2._re2.RE2.Anchor.ANCHOR_BOTH,
                                              re2._re2.RE2.Anchor.ANCHOR_START)
except AttributeError:
    _ANCHORS = None
_NO_SPAN = (-1, -1)

FLAGS = {"IGNORECASE": "i", "MULTILINE": "m", "DOTALL": "s"}
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log every refusal on stderr: one line is ours
_SCAN_OPTIONS = re2.Options()  # `last`'s scan: where matches are, not what they capture
_SCAN_OPTIONS.log_errors = False
_SCAN_OPTIONS.never_capture = True
MAX_GROUPS = 100  # capture groups in a task regex

_INLINE = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_HEX4, _HEX8 = re.compile(r"[0-9a-fA-F]{4}"), re.compile(r"[0-9a-fA-F]{8}")
_NAMED = re.compile(r"N\{([^}]*)\}")
_REPEAT = re.compile(r"\{\d*,?\d*\}\??")
_UPTO = re.compile(r"\{,(\d*)\}")  # Python 3.11's {,n} and {,} (as {0,})
_ECMA_BRACED = re.compile(r"u\{([0-9a-fA-F]{1,6})\}")
_EOL = "vbw_eol_"  # the name of the groups `$` takes a final newline in
_RESERVED = re.compile(r"(?<!\\)\(\?P?<(vbw_\w*)>")  # group names vbw keeps
_SURROGATE = re.compile("[\ud800-\udfff]")  # fixed and linear: one character each

# RE2's complaint (after "...: ") -> the construct, and what to write instead.
_CONSTRUCTS: list[tuple[str, str, str]] = [
    ("(?=", "lookahead (?=...)", "match the text itself and capture the part you need "
     "with a group"),
    ("(?!", "negative lookahead (?!...)", "spell out what may follow with a character "
     "class or alternatives"),
    ("(?<=", "lookbehind (?<=...)", "put the preceding text in the pattern and capture "
     "what follows with a group"),
    ("(?<!", "negative lookbehind (?<!...)", "spell out what may precede with a "
     "character class or alternatives"),
    ("(?>", "atomic group (?>...)", "write a plain group (?:...): RE2 never backtracks"),
    ("(?P=", "backreference (?P=name)", "match the repeated text explicitly, or compare "
     "the parts in the checker"),
    ("(?P>", "recursion (?P>name)", "match a bounded nesting depth explicitly"),
    ("(?(", "conditional group (?(...)...)", "write the alternatives out with |"),
]
_FLAG_NAMES = {"x": ("verbose flag x", "remove it and write the whitespace the pattern means"),
               "a": ("ASCII flag a", "remove it: \\d, \\w, \\s and \\b are already ASCII here"),
               "u": ("Unicode flag u", "remove it; \\p{Nd}, \\pL etc. are the Unicode classes"),
               "L": ("locale flag L", "remove it")}
_UNSUPPORTED = "is not supported by the linear-time engine (RE2)"
_BACKREF_FIX = "match the repeated text explicitly, or compare the parts in the checker"


def translate(pattern: str, flags: Iterable[str] = (), eol: bool = True) -> str:
    """The RE2 pattern that means what `pattern` means to Python (module docstring), with
    the listed `flags` (FLAGS' keys) turned on for the whole pattern; eol=False spells `$`
    as `\\z`, its meaning where the match must end at the end of the text."""
    flags = list(flags)
    multiline = [("MULTILINE" in flags)]  # per open group: is MULTILINE on inside it
    out, i, n = [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("\\Q", i):  # RE2's quoted literal text: copied as is
            end = pattern.find("\\E", i)
            end = n if end < 0 else end + 2
            out.append(pattern[i:end])
            i = end
            continue
        if ch == "\\":
            piece, i = _escape(pattern, i)
            out.append("\\z" if piece == "\\Z" else piece)
            continue
        if ch == "[":
            piece, i = _char_class(pattern, i)
            out.append(piece)
            continue
        if ch == "$" and not multiline[-1]:  # the newline it may take is a group: Regex
            _check_end(pattern, i + 1)
            taken = sum(_EOL in piece for piece in out)  # gives it back (see there)
            out.append(rf"(?:(?P<{_EOL}{taken}>\n)?\z)" if eol else "\\z")
            i += 1
            continue
        if ch == "{" and (m := _UPTO.match(pattern, i)):
            out.append(f"{{0,{m.group(1)}}}")
            i = m.end()
            continue
        elif ch == "(":
            if pattern.startswith("(?#", i) and (end := pattern.find(")", i)) >= 0:
                i = end + 1
                continue
            m = _INLINE.match(pattern, i)
            on = multiline[-1]
            if m is not None:
                on = ("m" in m.group(1)) or (on and "m" not in (m.group(2) or ""))
                if m.group(3) == ")":  # (?m): for the rest of the enclosing group
                    multiline[-1] = on
                    out.append(m.group(0))
                    i = m.end()
                    continue
            multiline.append(on)
        elif ch == ")" and len(multiline) > 1:
            multiline.pop()
        out.append(ch)
        i += 1
    prefix = "".join(FLAGS[f] for f in flags)
    return (f"(?{prefix})" if prefix else "") + "".join(out)


def _check_end(pattern: str, i: int) -> None:
    """A `$` (without MULTILINE) must end what can match after it: what follows it in the
    pattern (past closing groups, quantifiers, other branches of its group) could only
    match the final newline Python's `$` steps before, which the translation takes."""
    j, n = i, len(pattern)
    while j < n:
        if pattern[j] in ")?*+$":
            j += 1
        elif pattern.startswith(("\\Z", "\\z"), j):
            j += 2
        elif pattern[j] == "{" and (m := _REPEAT.match(pattern, j)):
            j = m.end()
        elif pattern[j] == "|":
            j = _group_end(pattern, j + 1)
        else:
            raise ValueError(f"{pattern[i - 1:i + 10]!r}: text after $ (without "
                             "MULTILINE) is not supported: end the pattern or the branch "
                             "at $, or write \\n?\\Z for an optional final newline")


def _group_end(pattern: str, j: int) -> int:
    """Where the group that holds pattern[j] closes (its `)`), or the pattern's end."""
    depth, n = 0, len(pattern)
    while j < n:
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            j = _char_class(pattern, j)[1]
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return j
            depth -= 1
        j += 1
    return n


def _escape(pattern: str, i: int) -> tuple[str, int]:
    """One escape at pattern[i] ('\\'), respelled for RE2; and where the next item starts."""
    nxt = pattern[i + 1:i + 2]
    if nxt == "C":
        raise ValueError("bad escape \\C: Python's re refuses it, and RE2 would match one "
                         "byte of a character's UTF-8; write . for any character")
    if nxt == "u" and (m := _HEX4.match(pattern, i + 2)):
        return f"\\x{{{m.group(0)}}}", m.end()
    if nxt == "U" and (m := _HEX8.match(pattern, i + 2)):
        return f"\\x{{{m.group(0)}}}", m.end()
    if nxt == "N" and (m := _NAMED.match(pattern, i + 1)):
        try:
            return f"\\x{{{ord(unicodedata.lookup(m.group(1))):x}}}", m.end()
        except KeyError:
            pass  # left as is: RE2 refuses it
    return pattern[i:i + 2], i + 2


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    """A bracketed class from pattern[i] ('['), escapes respelled; `]` first is literal."""
    out, j, n = ["["], i + 1, len(pattern)
    if pattern[j:j + 1] == "^":
        out.append("^")
        j += 1
    if pattern[j:j + 1] == "]":
        out.append("\\]")
        j += 1
    while j < n and pattern[j] != "]":
        if pattern[j] == "\\":
            piece, j = _escape(pattern, j)
            out.append(piece)
        else:
            out.append(pattern[j])
            j += 1
    if j < n:
        out.append("]")
        j += 1
    return "".join(out), j


def schema_regex(pattern: str) -> str:
    """An ECMA-262 JSON Schema pattern spelled for RE2 (`\\uXXXX`, `\\u{...}`)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        if pattern[i] == "\\":
            if (m := _ECMA_BRACED.match(pattern, i + 1)):
                out.append(f"\\x{{{m.group(1)}}}")
                i = m.end()
                continue
            piece, i = _escape(pattern, i)
            out.append(piece)
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


def refusal(pattern: str, problem: str) -> str:
    """The one-line reason RE2 refused `pattern` (its complaint is `problem`): the construct
    and what to write instead where we know it."""
    detail = problem.split(": ", 1)[-1]
    if problem.startswith("bad repetition operator") and detail[-1:] == "+":
        return (f"possessive quantifier {detail} {_UNSUPPORTED}, which never backtracks: "
                f"write {detail[:-1]}")
    if problem.startswith("invalid escape sequence") and detail[1:2] in "123456789gk":
        return f"backreference {detail} {_UNSUPPORTED}: {_BACKREF_FIX}"
    if problem.startswith("invalid perl operator"):
        for prefix, name, fix in _CONSTRUCTS:
            if prefix in pattern and (prefix.startswith(detail) or detail.startswith(prefix)):
                return f"{name} {_UNSUPPORTED}: {fix}"
        for letter, (name, fix) in _FLAG_NAMES.items():
            if letter in detail[2:]:
                return f"inline {name} in {detail}) {_UNSUPPORTED}: {fix}"
    if problem.startswith("invalid repetition size"):
        return (f"repeat count {detail} is too large for the linear-time engine (RE2): at "
                "most 1000, nested repeats multiplied; use + or * or smaller counts")
    if "pattern too large" in problem:
        return ("the pattern compiles to more than the linear-time engine's (RE2) memory "
                "bound; simplify it (nested counted repeats multiply)")
    return f"not a valid regex for the linear-time engine (RE2): {problem}"


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
        self._eol = [i for i, name in names.items() if name.startswith(_EOL)]
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
