"""A prompt template's source, checked before it is compiled.

Jinja's parser and code generator recurse once per level of nesting (a parenthesis, a
filter of a chain, an operator of a run, a block in a block), and so does Python's
compiler on the code Jinja writes: a template 500 parentheses or filters deep ended
vbw with RecursionError. A template is refused in one line, before that could happen,
if its source is longer than MAX_TEMPLATE_CHARS, its brackets nest deeper than
MAX_TEMPLATE_BRACKETS, or its syntax tree deeper than MAX_TEMPLATE_DEPTH (a filter
chain of n filters is n deep); and if it names a filter Jinja has but vbw does not
allow (vbw.task.templatefilters). Bundled templates are 3 to 9 deep.
"""

from __future__ import annotations

from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from vbw.task.templatefilters import ALLOWED_FILTERS, ALLOWED_TESTS

MAX_TEMPLATE_CHARS = 100_000
MAX_TEMPLATE_BRACKETS = 32
MAX_TEMPLATE_DEPTH = 64

_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def _brackets(env: Any, source: str) -> None:
    """Refused past MAX_TEMPLATE_BRACKETS nested brackets (the lexer does not recurse)."""
    depth = 0
    for _, kind, value in env.lex(source):
        if kind == "operator" and value in _OPEN:
            depth += 1
            if depth > MAX_TEMPLATE_BRACKETS:
                raise ValueError(f"brackets nest deeper than {MAX_TEMPLATE_BRACKETS} "
                                 "levels; vbw bounds template nesting")
        elif kind == "operator" and value in _CLOSE:
            depth -= 1


def _depth(tree: nodes.Node) -> int:
    """The syntax tree's depth, walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_TEMPLATE_DEPTH:
            break
        stack.extend((child, depth + 1) for child in node.iter_child_nodes())
    return deepest


def _filters(tree: nodes.Node) -> None:
    for kind, node_type, allowed in (("filter", nodes.Filter, ALLOWED_FILTERS),
                                     ("test", nodes.Test, ALLOWED_TESTS)):
        for node in tree.find_all(node_type):
            if node.name not in allowed:
                raise ValueError(f"{kind} {node.name!r} is not allowed in a vbw template "
                                 f"(allowed: {', '.join(sorted(allowed))})")


def checked_parse(env: Any, source: str) -> nodes.Template:
    """The template's syntax tree, once its source passes the checks above; ValueError
    (one line) if it does not, TemplateSyntaxError as Jinja raises it."""
    if len(source) > MAX_TEMPLATE_CHARS:
        raise ValueError(f"the template is {len(source):,} characters, over "
                         f"{MAX_TEMPLATE_CHARS:,}; vbw bounds template size")
    _brackets(env, source)
    try:
        tree = env.parse(source)
    except RecursionError:
        raise ValueError("the template nests too deeply to parse (operators, blocks or "
                         "unary `not`/`-` runs); vbw bounds template nesting") from None
    depth = _depth(tree)
    if depth > MAX_TEMPLATE_DEPTH:
        raise ValueError(f"the template nests deeper than {MAX_TEMPLATE_DEPTH} levels "
                         "(a long filter chain or operator run?); vbw bounds template "
                         "nesting")
    _filters(tree)
    return tree


def compile_checked(env: Any, source: str) -> Any:
    """The compiled template of a checked source (checked_parse)."""
    tree = checked_parse(env, source)
    try:
        return env.from_string(tree)
    except TemplateSyntaxError:
        raise
    except (RecursionError, MemoryError):
        raise ValueError("the template nests too deeply to compile; vbw bounds template "
                         "nesting") from None
