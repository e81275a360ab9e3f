"""How long a value's text would be, worked out before it is built.

A prompt template's values hold references, not copies: `[t, t, t]` is three pointers to
one string, so a list can stand for far more text than it takes memory, and `str()` of it
(output, `~`, a filter, `%s`) builds all of it at once. The bounded sandbox
(vbw.task.bounded) asks these functions for an upper bound on the text first, and refuses
past its budget; each stops counting once past the limit it is given, so asking costs at
most that much.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from itertools import chain
from typing import Any

from jinja2.utils import Namespace

# repr of a float is at most 24 characters (-1.2345678901234567e-308); of an object the
# sandbox can reach (a loop, a macro, a range, a bound method) well under 200
_FLOAT, _OTHER = 24, 200
_END = object()
_CONTAINERS = (list, tuple, set, frozenset, KeysView, ValuesView, ItemsView)


def _str_size(s: str, quoted: bool) -> int:
    """len(s), or with quoted=True a bound on len(repr(s))."""
    if not quoted:
        return len(s)
    if s.isprintable():  # repr adds quotes and escapes backslashes (and one kind of quote)
        return len(s) + 2 + s.count("\\") + s.count("'")
    return 10 * len(s) + 2  # \U0001xxxx at most


def text_size(value: Any, limit: int, quoted: bool = False) -> int:
    """An upper bound on len(str(value)) (len(repr(value)) with quoted=True), or some
    number past `limit` once the bound passes it. Containers are walked by a stack of
    iterators, one per level (a shared element is counted each time it appears, as its
    text would be)."""
    if type(value) is str and not quoted:  # the common case: a prompt's own text
        return len(value)
    total, stack = 0, [(iter((value,)), quoted)]
    while stack and total <= limit:
        items, q = stack[-1]
        v = next(items, _END)
        if v is _END:
            stack.pop()
        elif isinstance(v, str):
            total += _str_size(v, q)
        elif type(v) is bool or v is None:
            total += 5
        elif isinstance(v, int):
            total += v.bit_length() * 3 // 10 + 2
        elif isinstance(v, float):
            total += _FLOAT
        elif isinstance(v, Mapping):
            total += 2 + 4 * len(v)
            stack.append((chain.from_iterable(v.items()), True))
        elif isinstance(v, _CONTAINERS):
            total += 2 + 2 * len(v)
            stack.append((iter(v), True))
        else:
            total += _OTHER
            if isinstance(v, Namespace):
                stack.append((iter((v._Namespace__attrs,)), True))
    return total


def _spec_number(fmt: str, i: int, args: list[Any]) -> tuple[int, int]:
    """A printf width or precision at fmt[i]: (its value, where the spec goes on); a `*`
    takes the next argument."""
    if fmt[i:i + 1] == "*":
        n = args.pop(0) if args else 0
        return (abs(n) if type(n) is int else 0), i + 1
    j = i
    while j < len(fmt) and fmt[j] in "0123456789":
        j += 1
    digits = fmt[i:j]
    return (int(digits or 0) if len(digits) < 20 else 10 ** 20), j


def printf_size(fmt: str, args: Any, limit: int, factor: int = 1) -> int:
    """An upper bound on len(fmt % args), read as Python reads a %-format: each spec's
    width and precision plus its argument's text (times `factor`: Markup escapes its
    arguments), and the literal text. Past `limit` it may stop early."""
    positional = list(args) if type(args) is tuple else [args]
    mapping = args if isinstance(args, Mapping) else None
    total, i, n = len(fmt), 0, len(fmt)
    while i < n and total <= limit:
        i = fmt.find("%", i)
        if i < 0:
            break
        i += 1
        arg: Any = None
        keyed = fmt[i:i + 1] == "("
        if keyed:  # a key, parentheses nested as Python counts them
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"(": 1, ")": -1}.get(fmt[j], 0)
                j += 1
            key, i = fmt[i + 1:j - 1], j
            arg = mapping.get(key) if mapping is not None else None
        while i < n and fmt[i] in "-#0 +":
            i += 1
        width, i = _spec_number(fmt, i, positional)
        precision = 0
        if fmt[i:i + 1] == ".":
            precision, i = _spec_number(fmt, i + 1, positional)
        while i < n and fmt[i] in "hlL":
            i += 1
        conversion = fmt[i:i + 1]
        i += 1
        if conversion == "%":
            continue
        if not keyed and positional:
            arg = positional.pop(0)
        size = text_size(arg, limit, quoted=conversion in ("r", "a"))
        if conversion == "a":  # ascii() spells a character in up to 10
            size *= 10
        total += width + precision + factor * size + 330  # 330: a float's integer part
    return total
