"""A Jinja sandbox whose renders are bounded in size and time.

A prompt template is untrusted task input, and Jinja's sandbox stops attribute escapes,
not work: `{{ 'a' * 10**9 }}` built a 1 GB prompt (4.8 GB peak, 64 s) and two nested
`range` loops ran for minutes. Here a render has a character budget and a deadline:

- output is streamed (`generate`) and counted, the deadline checked at every chunk;
- no single operation may build a value past the budget: `*`, `+`, `%` and `**` are
  intercepted and sized before they run, as are `~` (concatenation), the filters that
  widen text (center, indent, wordwrap, join, replace, format) and method calls (a
  number argument beyond the budget, str.replace/join/format sized first); a result past
  the budget is refused too;
- a template with loops or macros runs under a line tracer (this thread, template frames
  only) that checks the deadline on every line, so a loop that prints nothing still ends.

Any breach raises PromptBudget (a ValueError): the caller names the prompt and the item.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_PROMPT_CHARS = 2_000_000  # a prompt this long is ~500k tokens: past any context
MAX_RENDER_SECONDS = 5.0
MAX_POWER_BITS = 100_000      # `**` results beyond this many bits are refused
# a width or precision of 1,000,000 and up in a format spec: {:>9999999} or %9999999s
_BIG_WIDTH = re.compile(r"\{[^{}]*:[^{}]*?(\d{7,})[^{}]*\}|%[-#0 +]*(\d{7,})|%[-#0 +]*\.(\d{7,})")
_WIDENING = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})  # str methods


class PromptBudget(ValueError):
    """A render past MAX_PROMPT_CHARS or MAX_RENDER_SECONDS."""


def _too_long(n: int) -> PromptBudget:
    return PromptBudget(f"the prompt would exceed {MAX_PROMPT_CHARS:,} characters "
                        f"(an operation building {n:,}); vbw bounds rendered prompts")


def _sized(value: Any) -> Any:
    """`value`, refused if it is text or a sequence past the budget."""
    if isinstance(value, (str, list, tuple, bytes)) and len(value) > MAX_PROMPT_CHARS:
        raise _too_long(len(value))
    return value


def _check_number(value: Any) -> None:
    if type(value) is int and abs(value) > MAX_PROMPT_CHARS:
        raise PromptBudget(f"the number {value if value < 10**12 else '(huge)'} is beyond "
                           f"what a prompt of at most {MAX_PROMPT_CHARS:,} characters needs")


def _check_format(fmt: Any, args: Any = ()) -> None:
    """A format string's widths and precisions; with a `*` width, its number arguments."""
    if not isinstance(fmt, str):
        return
    for groups in _BIG_WIDTH.findall(fmt):
        _check_number(int(next(g for g in groups if g)[:20]))
    if "*" in fmt:
        for a in args:
            _check_number(a)


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(str(value))


def _join_size(sep: str, items: Any) -> list[Any]:
    """The items of a join, refused once their joined size passes the budget."""
    out, total = [], 0
    for i, item in enumerate(items):
        total += _length(item) + (len(sep) if i else 0)
        if total > MAX_PROMPT_CHARS:
            raise _too_long(total)
        out.append(item)
    return out


def _replace_size(s: Any, old: Any, new: Any, count: Any = -1) -> None:
    s, old, new = str(s), str(old), str(new)
    hits = s.count(old) if old else len(s) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    size = len(s) + hits * (len(new) - len(old))
    if size > MAX_PROMPT_CHARS:
        raise _too_long(size)


def _guarded_filter(name: str, f: Any) -> Any:
    @functools.wraps(f)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        plain = [a for a in args if not hasattr(a, "environment")]  # context args aside
        if name in ("center", "indent", "wordwrap"):  # widths
            for a in (*plain[1:], *kwargs.values()):
                _check_number(a)
        if name == "format" and plain:
            _check_format(plain[0], plain[1:])
        if name == "replace" and len(plain) >= 3:
            _replace_size(*plain[:4])
        if name == "join" and plain:
            sep = plain[1] if len(plain) > 1 else kwargs.get("d", "")
            items = _join_size(str(sep), plain[0])
            args = tuple(items if a is plain[0] else a for a in args)
        return _sized(f(*args, **kwargs))
    return guarded


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
    intercepted_binops = frozenset({"*", "+", "%", "**"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in ("center", "indent", "wordwrap", "join", "replace", "format"):
            self.filters[name] = _guarded_filter(name, self.filters[name])

    def bounded_concat(self, parts: tuple[Any, ...]) -> str:
        texts = [p if isinstance(p, str) else str(p) for p in parts]
        total = sum(map(len, texts))
        if total > MAX_PROMPT_CHARS:
            raise _too_long(total)
        return "".join(texts)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and type(left) is int and type(right) is int and right > 0 \
                and abs(left) > 1 and right * abs(left).bit_length() > MAX_POWER_BITS:
            raise PromptBudget(f"{left} ** {right} is beyond what a prompt needs")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and type(n) is int and \
                        len(seq) * n > MAX_PROMPT_CHARS:
                    raise _too_long(len(seq) * n)
        if operator == "+" and isinstance(left, (str, list, tuple)) and \
                isinstance(right, (str, list, tuple)) and \
                len(left) + len(right) > MAX_PROMPT_CHARS:
            raise _too_long(len(left) + len(right))
        if operator == "%" and isinstance(left, str):
            _check_format(left, right if isinstance(right, tuple) else (right,))
        return _sized(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any,  # noqa: N805 (Jinja's names)
             **kwargs: Any) -> Any:
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner, name = getattr(method, "__self__", None), getattr(method, "__name__", "")
        if isinstance(owner, str):
            if name in _WIDENING:
                for a in (*args, *kwargs.values()):
                    _check_number(a)
            elif name in ("format", "format_map"):
                _check_format(owner)
            elif name == "replace" and len(args) >= 2:
                _replace_size(owner, *args[:3])
            elif name == "join" and args:
                args = (_join_size(owner, args[0]), *args[1:])
        return _sized(super().call(__context, __obj, *args, **kwargs))


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
            raise _too_long(total)
        if time.monotonic() > deadline:
            raise _deadline_passed()
        out.append(chunk)
    return "".join(out)
