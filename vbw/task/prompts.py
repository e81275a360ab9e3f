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
from jinja2.sandbox import ImmutableSandboxedEnvironment


def _json(obj: Any) -> str:
    return json.dumps(obj)


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True,
                                        autoescape=False)
    env.filters.pop("tojson", None)
    env.filters["json"] = _json
    return env


@lru_cache(maxsize=64)
def compile_template(source: str) -> Any:
    """Compile once; raises ValueError with Jinja's message on a syntax error."""
    try:
        return environment().from_string(source)
    except TemplateSyntaxError as e:
        raise ValueError(f"template syntax error (line {e.lineno}): {e.message}") from None


def render(source: str, context: dict[str, Any]) -> str:
    return compile_template(source).render(**context)
