"""The one model base of the task layer, and the string types a task file may hold.

Every task-file model is strict: an unknown key is an error (a typo fails at load time
instead of being ignored), a loaded task is frozen (it cannot drift between generating and
scoring), and aliased fields accept their Python name too. Regexes, JMESPath expressions
and Jinja templates are checked once, at load time, by the annotated types below, so a
model declares `pattern: RegexPattern` instead of repeating a validator. A regex must
compile on RE2 (vbw.task.regex), the linear-time engine it runs on, since it runs on
untrusted model output.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Any

import jmespath
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from vbw.errors import one_line
from vbw.task.prompts import compile_template
from vbw.task.regex import compile_task_regex


class StrictModel(BaseModel):
    """Unknown keys forbidden, instances frozen, fields settable by name or alias."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


@lru_cache(maxsize=256)
def compile_jmespath(expr: str) -> Any:
    """Compile once; ValueError with the parser's message (on one line) if it does not parse."""
    try:
        return jmespath.compile(expr)
    except jmespath.exceptions.JMESPathError as e:
        raise ValueError(f"not a valid JMESPath expression: {_jmespath_problem(e)}") from None


def _jmespath_problem(e: Exception) -> str:
    """The parser's complaint and column, without its multi-line caret drawing."""
    problem = getattr(e, "message", None) or getattr(e, "msg", None)
    column = getattr(e, "lex_position", None)
    if not problem:
        return one_line(e, typed=False) or "empty expression"
    return problem if column is None else f"{problem} at column {column}"


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(-?[0-9]+)\]")


@lru_cache(maxsize=256)
def _steps(expr: str) -> tuple[str | int, ...] | None:
    """The steps of a plain path: a field, then fields (`.b`) and list indexes (`[0]`,
    `[-1]`), e.g. `question[0][-1].content`; `@` (the data itself) is no step; None for
    any other expression."""
    if expr == "@":
        return ()
    first = _FIELD.match(expr)
    if first is None:
        return None
    steps: list[str | int] = [first.group()]
    pos = first.end()
    while pos < len(expr):
        m = _STEP.match(expr, pos)
        if m is None:
            return None
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    return tuple(steps)


def search(expr: str, data: Any) -> Any:
    """Evaluate a (cached, compiled) JMESPath expression. A plain path (fields and list
    indexes) is walked directly, as JMESPath evaluates it (a field of a dict, an index of
    a list, None of anything else or out of range), at a fraction of the cost of its
    tree-walking interpreter: scoring evaluates one per item and arm, and building an item
    one per field."""
    steps = _steps(expr)
    if steps is None:
        return compile_jmespath(expr).search(data)
    for step in steps:
        if type(step) is str:
            if not isinstance(data, dict):
                return None
            data = data.get(step)
        else:
            if not isinstance(data, list):
                return None
            try:
                data = data[step]
            except IndexError:
                return None
    return data


SHOWN_NAMES = 20  # field names a "path finds nothing" message lists, then "..."


def field_names(row: dict[str, Any]) -> str:
    """The names of a row's (or an item's) fields, for a message about a path that finds
    nothing there: the first SHOWN_NAMES in order, then `...`; each cut to 40 characters,
    a name that is not plain text shown repr'd (the message stays one line)."""
    shown = [str(k) if str(k).isprintable() else repr(k) for k in list(row)[:SHOWN_NAMES]]
    text = ", ".join(n if len(n) <= 40 else n[:37] + "..." for n in shown) or "(none)"
    return text + (", ..." if len(row) > SHOWN_NAMES else "")


def _regex(v: str) -> str:
    compile_task_regex(v)  # ValueError: the one-line refusal
    return v


def _jmespath(v: str) -> str:
    compile_jmespath(v)
    return v


def _template(v: str) -> str:
    try:
        compile_template(v)
    except ValueError as e:
        raise ValueError(one_line(e, typed=False)) from None
    return v


_REGEX_DIALECT = ("A regular expression, run on RE2 (linear time): Python's syntax without "
                  "backreferences, lookaround, possessive quantifiers or atomic groups; "
                  "\\d, \\w, \\s, \\b are ASCII.")
RegexPattern = Annotated[str, AfterValidator(_regex), Field(description=_REGEX_DIALECT)]
JMESPathExpr = Annotated[str, AfterValidator(_jmespath),
                         Field(description="A JMESPath expression.")]
JinjaTemplate = Annotated[str, AfterValidator(_template),
                          Field(description="A Jinja2 template (sandboxed, strict undefined).")]
