"""Task regex syntax spelled for RE2: a Python pattern translated to the RE2 pattern
that means the same (`translate`), an ECMA-262 JSON Schema pattern spelled for RE2
(`schema_regex`), and RE2's refusals as one line naming the construct and what to write
instead (`refusal`). Imports nothing of vbw; vbw.task.regex compiles and matches.

How it works and why: docs/design.md, section vbw.task.regex.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

FLAGS = {"IGNORECASE": "i", "MULTILINE": "m", "DOTALL": "s"}
_INLINE = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_HEX4, _HEX8 = re.compile(r"[0-9a-fA-F]{4}"), re.compile(r"[0-9a-fA-F]{8}")
_NAMED = re.compile(r"N\{([^}]*)\}")
_REPEAT = re.compile(r"\{\d*,?\d*\}\??")
_UPTO = re.compile(r"\{,(\d*)\}")  # Python 3.11's {,n} and {,} (as {0,})
_ECMA_BRACED = re.compile(r"u\{([0-9a-fA-F]{1,6})\}")
EOL = "vbw_eol_"  # the name of the groups `$` takes a final newline in

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
            taken = sum(EOL in piece for piece in out)  # gives it back (see there)
            out.append(rf"(?:(?P<{EOL}{taken}>\n)?\z)" if eol else "\\z")
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
