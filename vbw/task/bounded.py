"""A Jinja sandbox whose renders are bounded in size and time.

How it works and why: docs/design.md, section vbw.task.bounded.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from functools import update_wrapper
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import (ImmutableSandboxedEnvironment, SandboxedEscapeFormatter,
                            SandboxedFormatter)
from markupsafe import Markup

from vbw.task.templatefilters import (ALLOWED_GLOBALS, ALLOWED_TESTS, PromptBudget, bounded_filters,
                                      bounded_join, check_number, check_size,
                                      replace_size, too_long)
from vbw.task.textsize import printf_size, text_size

__all__ = ["MAX_PROMPT_CHARS", "MAX_RENDER_SECONDS", "MAX_INT_BITS", "BoundedSandbox",
           "PromptBudget", "needs_tracer", "render_bounded"]

MAX_PROMPT_CHARS = 2_000_000  # a prompt this long is ~500k tokens: past any context
MAX_RENDER_SECONDS = 5.0
MAX_INT_BITS = 100_000        # integer results beyond this many bits are refused

# str methods a template may call: all keep to a few times their input's size, but the
# widening ones, which are sized first (BoundedSandbox.call, wrap_str_format)
_STR_METHODS = frozenset({
    "capitalize", "casefold", "center", "count", "endswith", "expandtabs", "find",
    "format", "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal",
    "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace",
    "istitle", "isupper", "join", "ljust", "lower", "lstrip", "partition", "removeprefix",
    "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit",
    "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "upper",
    "zfill"})
_METHODS: dict[type, frozenset[str]] = {
    dict: frozenset({"items", "keys", "values", "get"}),
    list: frozenset({"index", "count"}), tuple: frozenset({"index", "count"}),
    int: frozenset({"bit_length"}), float: frozenset({"is_integer"})}
_WIDENING = frozenset({"center", "ljust", "rjust", "zfill"})
_SPEC_NUMBER_DIGITS = 19


def _sized_text(value: Any) -> Any:
    """`value`, refused if its text would pass the budget (a string is its own text, which
    the output's count or the operation that uses it sizes)."""
    if type(value) is not str:
        check_size(text_size(value, MAX_PROMPT_CHARS), MAX_PROMPT_CHARS)
    return value


def _int_bits(value: Any) -> Any:
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        raise PromptBudget(f"an integer of {value.bit_length():,} bits is beyond what a "
                           f"prompt needs (at most {MAX_INT_BITS:,})")
    return value


def _spec_numbers(spec: str) -> None:
    """The widths and precisions of a str.format field's spec: each within the budget."""
    digits = ""
    for ch in spec + " ":
        if ch in "0123456789":
            digits += ch
            if len(digits) > _SPEC_NUMBER_DIGITS:
                check_number(10 ** 20, MAX_PROMPT_CHARS)
        elif digits:
            check_number(int(digits), MAX_PROMPT_CHARS)
            digits = ""


class _BoundedFormatter(SandboxedFormatter):
    """str.format in the sandbox, each field sized before and counted after."""

    def __init__(self, env: Any, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.vbw_size = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        _spec_numbers(format_spec)
        _sized_text(value)
        piece = super().format_field(value, format_spec)
        self.vbw_size += len(piece)
        check_size(self.vbw_size, MAX_PROMPT_CHARS)
        return piece


class _BoundedEscapeFormatter(_BoundedFormatter, SandboxedEscapeFormatter):
    """Markup.format, bounded the same way."""


def _format_call(fmt: str, method: str, formatter: _BoundedFormatter) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> str:
        if method == "format_map":
            if kwargs or len(args) != 1:
                raise TypeError("format_map() takes exactly one argument")
            args, kwargs = (), args[0]
        check_size(len(fmt), MAX_PROMPT_CHARS)
        return type(fmt)(formatter.vformat(fmt, args, kwargs))
    return wrapper


class _BoundedCodeGenerator(CodeGenerator):
    """`a ~ b` goes through the environment, so its size is checked like `+`."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """See the module docstring."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "+", "-", "%", "**"})

    def __init__(self, json_filter: Any, **kwargs: Any) -> None:
        super().__init__(finalize=_sized_text, **kwargs)
        self.filters = bounded_filters(self.filters, MAX_PROMPT_CHARS, json_filter)
        self.globals = {k: v for k, v in self.globals.items() if k in ALLOWED_GLOBALS}
        self.tests = {k: v for k, v in self.tests.items() if k in ALLOWED_TESTS}

    def concat(self, parts: Any) -> str:  # type: ignore[override]
        """A block's captured output (macro, call, set block, filter block)."""
        parts = list(parts)
        check_size(sum(map(len, parts)), MAX_PROMPT_CHARS)
        return "".join(parts)

    def bounded_concat(self, parts: tuple[Any, ...]) -> str:
        total = 0
        for p in parts:
            total += text_size(p, MAX_PROMPT_CHARS)
            check_size(total, MAX_PROMPT_CHARS)
        return "".join([p if isinstance(p, str) else str(p) for p in parts])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        ints = type(left) is int and type(right) is int
        if operator == "**" and ints and right > 0 and abs(left) > 1 and \
                right * (abs(left).bit_length() - 1) > MAX_INT_BITS:
            raise PromptBudget(f"{left} ** {right} is beyond what a prompt needs")
        if operator == "*":
            if ints and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
                raise PromptBudget("a product of integers beyond what a prompt needs "
                                   f"(at most {MAX_INT_BITS:,} bits)")
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and type(n) is int:
                    check_size(len(seq) * n, MAX_PROMPT_CHARS)
        if operator == "+" and isinstance(left, (str, list, tuple)) and \
                isinstance(right, (str, list, tuple)):
            check_size(len(left) + len(right), MAX_PROMPT_CHARS)
        if operator == "%" and isinstance(left, str):
            check_size(printf_size(left, right, MAX_PROMPT_CHARS,
                                   6 if isinstance(left, Markup) else 1), MAX_PROMPT_CHARS)
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, str):
            check_size(len(result), MAX_PROMPT_CHARS)
        return _int_bits(result)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        if not callable(value) or getattr(value, "__self__", None) is not obj:
            return True
        if isinstance(obj, str):
            return attr in _STR_METHODS
        allowed = next((names for t, names in _METHODS.items() if isinstance(obj, t)), None)
        if allowed is not None:
            return attr in allowed
        return not isinstance(obj, (bytes, set, frozenset))

    def wrap_str_format(self, value: Any) -> Any:
        if getattr(value, "__name__", None) not in ("format", "format_map") or \
                not isinstance(getattr(value, "__self__", None), str):
            return None
        fmt = value.__self__
        formatter = _BoundedEscapeFormatter(self, escape=fmt.escape) \
            if isinstance(fmt, Markup) else _BoundedFormatter(self)
        return update_wrapper(_format_call(fmt, value.__name__, formatter), value)

    def call(__self, __context: Any, __obj: Any, *args: Any,  # noqa: N805 (Jinja's names)
             **kwargs: Any) -> Any:
        owner, name = getattr(__obj, "__self__", None), getattr(__obj, "__name__", "")
        if isinstance(owner, str):
            if name in _WIDENING:
                for a in (*args, *kwargs.values()):
                    check_number(a, MAX_PROMPT_CHARS)
            elif name == "expandtabs":
                size = args[0] if args else kwargs.get("tabsize", 8)
                check_number(size, MAX_PROMPT_CHARS)
                if type(size) is int:
                    check_size(len(owner) + owner.count("\t") * size, MAX_PROMPT_CHARS)
            elif name == "replace" and len(args) >= 2:
                replace_size(MAX_PROMPT_CHARS, owner, *args[:3])
            elif name == "join" and args:
                args = (bounded_join(owner, args[0], MAX_PROMPT_CHARS), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, str):
            check_size(len(result), MAX_PROMPT_CHARS)
        return _int_bits(result)


def _loops(template_ast: nodes.Template) -> bool:
    return next(template_ast.find_all((nodes.For, nodes.Macro, nodes.CallBlock)),
                None) is not None


def needs_tracer(env: BoundedSandbox, source: str) -> bool:
    """Whether a template can loop or recurse (for, macro, call block)."""
    return _loops(env.parse(source))


def _deadline_passed() -> PromptBudget:
    return PromptBudget(f"rendering took over {MAX_RENDER_SECONDS:g} s (a loop in the "
                        "template?); vbw bounds prompt rendering")


def render_bounded(template: Any, context: dict[str, Any], traced: bool) -> str:
    """Stream the template's output within the character budget and the deadline."""
    deadline = time.monotonic() + MAX_RENDER_SECONDS
    previous = sys.gettrace() if traced else None

    def local(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise _deadline_passed()
        return local

    def global_trace(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == "<template>":
            return local
        return previous(frame, event, arg) if previous is not None else None

    if traced:
        sys.settrace(global_trace)
    try:
        return _collect(template.generate(**context), deadline)
    finally:
        if traced:
            sys.settrace(previous)


def _collect(chunks: Iterator[str], deadline: float) -> str:
    out, total = [], 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_PROMPT_CHARS:
            raise too_long(total, MAX_PROMPT_CHARS)
        if time.monotonic() > deadline:
            raise _deadline_passed()
        if chunk:
            out.append(chunk)
    return "".join(out)
