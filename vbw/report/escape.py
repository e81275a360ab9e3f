"""Escaping for report.md: strings from replays and task files are data, never markup.

A replay's header (hardware, engine, model file, versions), its item ids and a task's label
come from files vbw did not write. Pasted raw into Markdown, a newline starts a heading or
a table row, `|` splits a table cell, `<script>` is HTML and `[x](y)` a link. `text()`
makes a string inert prose on one line; `code()` makes it a code span (ids, keys, paths).
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"[\s\x00-\x1f\x7f]+")  # newlines, tabs and control characters
_MARKUP = re.compile(r"([\\`\[\]|])")  # code, links and images, table cells
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def one_line(s: str) -> str:
    return _SPACE.sub(" ", s).strip()


def text(s: str) -> str:
    """Prose on one line that can open no block, table cell, code span, link or HTML tag.
    (With newlines gone, `#`, `>` or `-` cannot start a heading, quote or list; emphasis
    such as `*a*` stays possible, and harmless.)"""
    s = "".join(_HTML.get(c, c) for c in one_line(str(s)))
    return _MARKUP.sub(r"\\\1", s)


def code(s: str, in_table: bool = False) -> str:
    """A code span holding `s` on one line; a backtick run inside never closes it. In a
    table a `|` must be escaped even inside a code span (GitHub's table syntax)."""
    s = one_line(str(s))
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    if in_table:
        s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"
