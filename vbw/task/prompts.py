"""Prompt templates: Jinja2 in a sandbox with StrictUndefined, and a `json` filter that
renders exactly like Python's `json.dumps(obj)` with default arguments.

Jinja's own `tojson` sorts keys and HTML-escapes, which would change the experiment's
prompts, so it is removed from the environment rather than left as a trap.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError

from vbw.task.bounded import BoundedSandbox, needs_tracer, render_bounded


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
    env = BoundedSandbox(undefined=StrictUndefined, keep_trailing_newline=True,
                         autoescape=False)
    env.filters.pop("tojson", None)
    env.filters["json"] = _json
    return env


@lru_cache(maxsize=64)
def compile_template(source: str) -> Any:
    """Compile once; raises ValueError with Jinja's message on a syntax error."""
    try:
        template = environment().from_string(source)
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
    template = compile_template(source)
    return render_bounded(template, context, template.vbw_traced)
