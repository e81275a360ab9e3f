"""A YAML syntax error in a newcomer's words: PyYAML says "mapping values are not allowed
here" or "expected <block end>, but found '<block mapping start>'" over several lines; a
user needs the line and its usual cause (an indentation, a tab, an unquoted colon) and the
fix. vbw.validation.load_yaml puts the result after `FILE:LINE: invalid YAML: `."""

from __future__ import annotations

import re
from typing import Any

TAB = "a tab character: YAML indents with spaces only; replace the tab with spaces"
BLOCK = ("indentation: this line does not fit the block it is in{start}; indent it as far "
         "as its siblings, with spaces (a list's `- ` items and `key:`s do not mix at one "
         "level)")
NO_COLON = ("a line that is neither `key: value` nor a list item `- ...` (a missing ':' "
            "after a key, or a value's continuation indented too little?)")
_KEY = re.compile(r"^(\s*(?:-\s+)?)([^\s:#'\"][^:#]*?):\s+(.*?)\s*$")


def explain(e: Any, text: str) -> tuple[int | None, str]:
    """The 1-based line at fault (None if PyYAML names none) and what went wrong there,
    with the fix; PyYAML's own one-line problem when it is none of the usual causes."""
    problem = " ".join(str(getattr(e, "problem", None) or str(e).splitlines()[0]).split())
    mark = getattr(e, "problem_mark", None)
    if mark is None:
        return None, problem
    lines = text.splitlines()
    context, since = getattr(e, "context", None), getattr(e, "context_mark", None)
    start = f"from line {since.line + 1}" if since is not None else ""
    if "'\\t'" in problem or "tab character" in problem:
        return mark.line + 1, TAB
    if problem == "mapping values are not allowed here":
        line = lines[mark.line] if mark.line < len(lines) else ""
        return mark.line + 1, _colon(line, mark.column, mark.line)
    if problem.startswith("expected <block end>"):
        return mark.line + 1, BLOCK.format(start=f" ({start})" if start else "")
    if since is not None and problem.startswith("could not find expected ':'"):
        return since.line + 1, NO_COLON
    if since is not None and "quoted scalar" in str(context):
        return since.line + 1, "a quote opened on this line is never closed"
    return mark.line + 1, problem + (f" ({context}, {start})" if context and start else "")


def _colon(line: str, column: int, index: int) -> str:
    """A ': ' PyYAML cannot take: a second one in `key: value` (an unquoted colon in the
    value), else a key indented under a line whose value is already given."""
    m = _KEY.match(line)
    if m is not None and m.end(2) < column:
        indent, key, value = m.groups()
        return (f"an unquoted ': ' inside the value of {key.strip()!r}; quote the value: "
                f"{indent.strip() + ' ' if indent.strip() else ''}{key.strip()}: "
                f"{_quoted(value)}")
    above = f" (line {index})" if index > 0 else ""
    return ("indentation: this key is indented deeper than the line above it"
            f"{above}, whose value is already given; line it up with its siblings, or "
            "quote the value above if the colon belongs to it")


def _quoted(value: str) -> str:
    """`value` as a YAML double-quoted scalar (or single-quoted when it holds a `"` or a
    backslash, where double quotes would need escapes)."""
    if '"' in value or "\\" in value:
        return "'" + value.replace("'", "''") + "'"
    return f'"{value}"'
