"""The filters, tests and globals a prompt template may use, each bounded.

An allow-list, not a deny-list: a filter Jinja adds later is not reachable until it is
listed here with its bound. Every allowed filter that builds text has its inputs sized
first (vbw.task.textsize) against the prompt budget: the value it turns into text, the
widths and fill values it multiplies, and its result once built. Filters that only pick,
sort or count a value's own elements build no text. Left out: `wordwrap`, `urlize`,
`striptags` and `pprint` (their work grows faster than their input), `random`
(a prompt must not change between runs), `xmlattr` and `tojson` (vbw's `json` is
json.dumps'); of the globals, `lipsum`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from markupsafe import Markup

from vbw.task.textsize import printf_size, text_size

# filters that turn their value into text
TEXT_FILTERS = frozenset({
    "capitalize", "center", "e", "escape", "filesizeformat", "forceescape", "format",
    "indent", "join", "json", "lower", "replace", "safe", "string", "title", "trim",
    "truncate", "upper", "urlencode", "wordcount"})
# filters that pick, order, count or convert a value's elements, building no text
ELEMENT_FILTERS = frozenset({
    "abs", "attr", "batch", "count", "d", "default", "dictsort", "first", "float",
    "groupby", "int", "items", "last", "length", "list", "map", "max", "min", "reject",
    "rejectattr", "reverse", "round", "select", "selectattr", "slice", "sort", "sum",
    "unique"})
ALLOWED_FILTERS = TEXT_FILTERS | ELEMENT_FILTERS
ALLOWED_GLOBALS = frozenset({"range", "dict", "namespace", "cycler", "joiner"})
# tests compare or classify a value: none builds anything
ALLOWED_TESTS = frozenset({
    "!=", "<", "<=", "==", ">", ">=", "boolean", "callable", "defined", "divisibleby",
    "eq", "equalto", "escaped", "even", "false", "filter", "float", "ge", "greaterthan",
    "gt", "in", "integer", "iterable", "le", "lessthan", "lower", "lt", "mapping", "ne",
    "none", "number", "odd", "sameas", "sequence", "string", "test", "true", "undefined",
    "upper"})


class PromptBudget(ValueError):
    """A render past the prompt's size or time bound (vbw.task.bounded)."""


def too_long(n: int, budget: int) -> PromptBudget:
    return PromptBudget(f"the prompt would exceed {budget:,} characters "
                        f"(an operation building {n:,}); vbw bounds rendered prompts")


def check_size(n: int, budget: int) -> None:
    if n > budget:
        raise too_long(n, budget)


def check_number(value: Any, budget: int) -> None:
    """A width, count or fill size a filter multiplies by: at most the budget."""
    if type(value) is int and abs(value) > budget:
        raise PromptBudget(f"the number {value if abs(value) < 10**12 else '(huge)'} is "
                           f"beyond what a prompt of at most {budget:,} characters needs")


def _length(value: Any) -> int:
    return len(value) if hasattr(value, "__len__") else 0


def _indent(budget: int, s: Any, width: Any = 4, *rest: Any, **kw: Any) -> None:
    text = str(s)
    w = len(width) if isinstance(width, str) else width if type(width) is int else 0
    check_number(w, budget)
    check_size(len(text) + (text.count("\n") + 1) * abs(w), budget)


def replace_size(budget: int, s: Any, old: Any, new: Any, count: Any = None) -> None:
    s, old, new = str(s), str(old), str(new)
    hits = s.count(old) if old else len(s) + 1
    if type(count) is int and count >= 0:
        hits = min(hits, count)
    check_size(len(s) + hits * max(0, len(new) - len(old)), budget)


def _chunks(budget: int, value: Any, count: Any, fill_with: Any) -> None:
    """batch and slice: `count` slots, each possibly filled with `fill_with`."""
    check_number(count, budget)
    n = count if type(count) is int else 0
    check_size(_length(value) + n, budget)
    if fill_with is not None:
        check_size(n * text_size(fill_with, budget), budget)


def _batch(budget: int, value: Any, linecount: Any = 1, fill_with: Any = None) -> None:
    _chunks(budget, value, linecount, fill_with)


def _slice(budget: int, value: Any, slices: Any = 1, fill_with: Any = None) -> None:
    _chunks(budget, value, slices, fill_with)


def _sum(budget: int, value: Any, attribute: Any = None, start: Any = 0) -> None:
    if type(start) not in (int, float):  # a sequence start sums in quadratic time
        raise PromptBudget("sum's start must be a number in a vbw template")


def _format(budget: int, value: Any, *args: Any, **kwargs: Any) -> None:
    fmt = str(value)
    check_size(printf_size(fmt, kwargs or args, budget,
                           6 if isinstance(value, Markup) else 1), budget)


def _center(budget: int, value: Any, width: Any = 80) -> None:
    check_number(width, budget)


def _json(budget: int, value: Any) -> None:
    """json.dumps' text sized before it is built: within a bound of 12 characters a
    character of the value's text (json's longest escape), else by counting the
    encoder's own chunks as they come."""
    if 12 * text_size(value, budget // 12) + 2 > budget:
        total = 0
        for chunk in json.JSONEncoder().iterencode(value):
            total += len(chunk)
            check_size(total, budget)


_PRECHECK: dict[str, Callable[..., None]] = {
    "indent": _indent, "replace": replace_size, "batch": _batch, "slice": _slice,
    "sum": _sum, "format": _format, "center": _center, "json": _json}


def bounded_join(sep: str, items: Any, budget: int) -> list[Any]:
    """The items of a join, refused once their joined text passes the budget."""
    out, total = [], 0
    for i, item in enumerate(items):
        total += text_size(item, budget) + (len(sep) if i else 0)
        check_size(total, budget)
        out.append(item)
    return out


def wrap(name: str, f: Callable[..., Any], budget: int) -> Callable[..., Any]:
    """Filter `name` with its bound: its text input sized, its numbers and fill values
    checked (_PRECHECK), its text result sized."""
    precheck = _PRECHECK.get(name)
    textual = name in TEXT_FILTERS

    @functools.wraps(f)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        plain = [a for a in args if not hasattr(a, "environment")]  # context args aside
        for extra in (*plain[1:], *kwargs.values()):
            check_size(text_size(extra, budget), budget)
        if textual and plain and name not in ("join", "json"):
            check_size(text_size(plain[0], budget), budget)
        if precheck is not None and plain:
            precheck(budget, *plain, **kwargs)
        if name == "join" and plain:
            sep = plain[1] if len(plain) > 1 else kwargs.get("d", "")
            items = bounded_join(str(sep), plain[0], budget)
            args = tuple(items if a is plain[0] else a for a in args)
        result = f(*args, **kwargs)
        if isinstance(result, str):
            check_size(len(result), budget)
        return result
    return bounded


def bounded_filters(filters: Mapping[str, Callable[..., Any]], budget: int,
                    json_filter: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The allowed filters of `filters`, each wrapped with its bound, and `json`."""
    out = {name: wrap(name, filters[name], budget)
           for name in sorted(ALLOWED_FILTERS - {"json"})}
    out["json"] = wrap("json", json_filter, budget)
    return out
