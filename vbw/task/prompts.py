"""Prompt templates: Jinja2 in a sandbox with StrictUndefined, and a `json` filter that
renders exactly like Python's `json.dumps(obj)` with default arguments.

Jinja's own `tojson` sorts keys and HTML-escapes, which would change the experiment's
prompts, so it is removed from the environment rather than left as a trap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, nodes

from vbw.task.bounded import MAX_PROMPT_CHARS, BoundedSandbox, needs_tracer, render_bounded
from vbw.task.templatesource import checked_parse, compile_checked


_LAST: list[tuple[Any, str]] = []  # the last few (object, its JSON), object kept alive


def _json(obj: Any) -> str:
    """json.dumps(obj); a static schema is one object rendered into every item's prompts,
    so the last few objects' texts are reused (by identity: nothing mutates a task's
    values once loaded)."""
    for seen, text in _LAST:
        if seen is obj:
            return text
    text = json.dumps(obj)
    if isinstance(obj, (dict, list)):
        _LAST.insert(0, (obj, text))
        del _LAST[4:]
    return text


@lru_cache(maxsize=1)
def environment() -> BoundedSandbox:
    """The sandbox, bounded in output size and render time (vbw.task.bounded)."""
    return BoundedSandbox(_json, undefined=StrictUndefined, keep_trailing_newline=True,
                          autoescape=False)


@lru_cache(maxsize=64)
def compile_template(source: str) -> Any:
    """Compile once, its source checked first (vbw.task.templatesource); raises
    ValueError with Jinja's message on a syntax error, or the check's one line."""
    try:
        template = compile_checked(environment(), source)
    except TemplateSyntaxError as e:
        raise ValueError(f"template syntax error (line {e.lineno}): {e.message}") from None
    # Jinja layers the template's globals over the environment's as a ChainMap and copies
    # them into every render's context; a plain dict of the same (fixed) globals renders
    # the same and copies several times faster.
    template.globals = dict(template.globals)
    template.vbw_traced = needs_tracer(environment(), source)
    return template


def render(source: str, context: dict[str, Any]) -> str:
    """The prompt, or PromptBudget (a ValueError) past its size or time bound."""
    plain = render_plain(source, context)
    if plain is not None:
        return plain
    template = compile_template(source)
    return render_bounded(template, context, template.vbw_traced)


# names Jinja's compiler binds itself (`self` is the template, not a context variable)
_SPECIAL = frozenset({"self", "loop", "caller", "varargs", "kwargs", "super"})


@lru_cache(maxsize=64)
def plain_parts(source: str) -> tuple[tuple[str, str], ...] | None:
    """The template as ("text", literal), ("str", name) for `{{ name }}` and ("json", name)
    for `{{ name | json }}`, in order; None if it holds anything else (a statement, an
    expression, another filter) or does not parse."""
    try:
        body = checked_parse(environment(), source).body
    except (TemplateSyntaxError, ValueError):
        return None
    parts: list[tuple[str, str]] = []
    for out in body:
        if type(out) is not nodes.Output:
            return None
        for n in out.nodes:
            if type(n) is nodes.TemplateData:
                parts.append(("text", n.data))
            elif type(n) is nodes.Name and n.ctx == "load" and n.name not in _SPECIAL:
                parts.append(("str", n.name))
            elif (type(n) is nodes.Filter and n.name == "json" and type(n.node) is nodes.Name
                  and n.node.name not in _SPECIAL and not n.args and not n.kwargs
                  and n.dyn_args is None and n.dyn_kwargs is None):
                parts.append(("json", n.node.name))
            else:
                return None
    return tuple(parts)


def render_plain(source: str, context: Mapping[str, Any]) -> str | None:
    """What `render(source, context)` gives, built without Jinja, or None where that is
    not certain: a plain template (plain_parts) whose every variable is in the context,
    `{{ name }}` a string and `{{ name | json }}` a value json.dumps spells, the whole
    within MAX_PROMPT_CHARS. Jinja's output for such a template is its literal text (the
    parse's, newlines normalised) and those values, joined; the only ways it could fail
    (an undefined variable, a value str() or json.dumps refuses, the size budget) are
    excluded, so a None leaves Jinja to render, or to fail with its own message. A
    Jinja render costs tens of microseconds of set-up (a context, a generator); this is a
    join."""
    parts = plain_parts(source)
    if parts is None:
        return None
    out: list[str] = []
    size = 0
    for kind, value in parts:
        if kind == "text":
            piece = value
        elif value not in context:
            return None
        elif kind == "str":
            piece = context[value]
            if type(piece) is not str:
                return None
        else:
            try:
                piece = _json(context[value])
            except (TypeError, ValueError, RecursionError):
                return None
        size += len(piece)
        out.append(piece)
    return "".join(out) if size <= MAX_PROMPT_CHARS else None


@lru_cache(maxsize=64)
def _lengths(source: str) -> tuple[int, tuple[tuple[str, bool], ...]] | None:
    """A plain template (plain_parts) as (its literal text's length, each name it puts
    with whether it puts it as JSON); None if it is not plain."""
    parts = plain_parts(source)
    if parts is None:
        return None
    return (sum(len(v) for k, v in parts if k == "text"),
            tuple((v, k == "json") for k, v in parts if k != "text"))


_ABSENT = object()


def plain_fits(source: str | None, fields: Mapping[str, Any], schema: Any = _ABSENT) -> bool:
    """Whether render_plain(source, context) gives a text, so that `render` gives it and
    cannot fail, worked out from the values' lengths without building it; `context` is
    `fields`, with `schema` over a field of that name when given (as Task renders its
    `json` and `package` prompts). False says only that rendering must tell."""
    lengths = None if source is None else _lengths(source)
    if lengths is None:
        return False
    size, names = lengths
    for name, as_json in names:
        value = schema if name == "schema" and schema is not _ABSENT \
            else fields.get(name, _ABSENT)
        if not as_json:
            if type(value) is not str:
                return False
            size += len(value)
        elif value is _ABSENT:
            return False
        else:
            try:
                size += len(_json(value))
            except (TypeError, ValueError, RecursionError):
                return False
    return size <= MAX_PROMPT_CHARS
