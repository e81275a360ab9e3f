"""Prompt rendering is bounded (vbw.task.bounded): no operation builds a value past the
character budget, a loop or recursion ends at the deadline, and ordinary templates render
exactly as before (issue 17, item 10)."""

from __future__ import annotations

import time

import pytest

from vbw.task.bounded import MAX_PROMPT_CHARS, PromptBudget
from vbw.task.prompts import render

HOSTILE = {
    "repeat": "{{ 'a' * 10**9 }}",
    "repeat, number first": "{{ 10**9 * 'a' }}",
    "huge power": "{{ 9 ** (9 ** 9) }}",
    "center filter": "{{ 'a'|center(10**9) }}",
    "str.ljust": "{{ 'x'.ljust(10**9) }}",
    "format width": "{{ '{:>999999999}'.format('x') }}",
    "percent width": "{{ '%999999999s' % 'x' }}",
    "percent star width": "{{ '%*s' % (999999999, 'x') }}",
    "format filter width": "{{ '%999999999s'|format('x') }}",
    "doubling by ~": "{% set a = 'x' * 1000000 %}{% set b = a ~ a %}{{ b ~ b }}",
    "doubling by +": "{{ ('a' * 1000000) + ('b' * 1000000) + 'c' }}",
    "replace amplifies": "{% set a = 'x' * 1000 %}{{ a|replace('x', a)|replace('x', a) }}",
    "str.replace amplifies": "{% set a = 'x' * 2000 %}{{ a.replace('x', a) }}",
    "join amplifies": "{{ range(100000)|join('x' * 100) }}",
    "output past the budget": "{% for i in range(100000) %}{{ 'y' * 100 }}{% endfor %}",
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_no_value_grows_past_the_budget(case: str) -> None:
    start = time.perf_counter()
    with pytest.raises(PromptBudget):
        render(HOSTILE[case], {})
    assert time.perf_counter() - start < 2


def test_a_loop_without_output_ends_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deadline is read at each render: shortened here (the real one is 5 s)."""
    import vbw.task.bounded as bounded

    monkeypatch.setattr(bounded, "MAX_RENDER_SECONDS", 0.5)
    start = time.perf_counter()
    with pytest.raises(PromptBudget, match="rendering took over 0.5 s"):
        render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
               "{% endfor %}", {})
    assert time.perf_counter() - start < 0.5 + 2


def test_ordinary_templates_render_as_before() -> None:
    ctx = {"q": "hi", "s": {"a": [1, 2]}, "n": 123456789}
    assert render("{{ q }} {{ s | json }} {{ '{:,}'.format(n) }} {{ '%d' % n }}", ctx) == \
        'hi {"a": [1, 2]} 123,456,789 123456789'
    assert render("{% for x in s.a %}{{ x }}{{ ', ' if not loop.last }}{% endfor %}", ctx) \
        == "1, 2"
    assert render("{{ 'ab' * 3 }}{{ [1] + [2] }}{{ 2 ** 10 }}", ctx) == "ababab[1, 2]1024"
    exact = "z" * MAX_PROMPT_CHARS
    assert render("{{ t }}", {"t": exact}) == exact  # the budget itself is allowed


ISSUE_30 = {  # issue 30, item 5: bounds the first sandbox let through
    "indent by a string width": "{{ ('a\\n' * 100000)|indent('x' * 1000000) }}",
    "batch with a fill value": "{% for b in [1]|batch(10**9, 'x') %}{% endfor %}",
    "batch fill weight": "{{ [1]|batch(1000000, 'xxx')|list }}",
    "slice with a fill value": "{{ [1]|slice(1000000, 'xxx')|list }}",
    "squaring in set": "{% set x = 10**30000 %}{% set x = x*x %}{% set x = x*x %}"
                       "{% set x = x*x %}{% set x = x*x %}{{ x > 0 }}",
    "format filter, many widths": "{{ ('%999999s' * 100)|format(*range(100)) }}",
    "percent, many widths": "{{ ('%999999s' * 3) % (1, 2, 3) }}",
    "str.format, many widths": "{{ ('{:999999}' * 3).format(1, 2, 3) }}",
    "str.format, nested width": "{{ '{0:{1}}{0:{1}}'.format('a', 1999999) }}",
    "expandtabs": "{{ ('\\t' * 100000).expandtabs(1000000) }}",
    "list of references": "{% set s = 'x' * 1000000 %}{{ [s, s, s] }}",
    "list of references ~": "{% set s = 'x' * 1000000 %}{{ [s, s, s] ~ '' }}",
    "json of references": "{% set s = 'x' * 1000000 %}{{ [s, s, s]|json }}",
    "join of references": "{% set s = 'x' * 1000000 %}{{ [s, s, s]|join }}",
    "string of references": "{% set s = 'x' * 1000000 %}{{ [s, s, s]|string|length }}",
    "namespace of references": "{% set ns = namespace() %}{% set s = 'x' * 1000000 %}"
                               "{% set ns.a = [s, s, s] %}{{ ns }}",
    "macro output": "{% set s = 'x' * 100000 %}{% macro m() %}{% for i in range(30) %}"
                    "{{ s }}{% endfor %}{% endmacro %}{{ m()|length }}",
    "set block": "{% set s = 'x' * 100000 %}{% set b %}{% for i in range(30) %}{{ s }}"
                 "{% endfor %}{% endset %}{{ b|length }}",
    "markup percent": "{{ ('%s' * 10)|safe % (('<' * 100000,) * 10) }}",
}


@pytest.mark.parametrize("case", list(ISSUE_30))
def test_issue_30_bounds(case: str) -> None:
    start = time.perf_counter()
    with pytest.raises(PromptBudget):
        render(ISSUE_30[case], {})
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("source, error", [
    ("{{ ('a' * 100).translate({97: 'x' * 100000}) }}", "'translate' of 'str'"),
    ("{{ (1).to_bytes(10**9, 'big') }}", "'to_bytes' of 'int'"),
    ("{{ [[1]]|sum(start=[]) }}", "sum's start must be a number"),
])
def test_unbounded_methods_are_refused(source: str, error: str) -> None:
    with pytest.raises(Exception, match=error):
        render(source, {})


def test_integers_are_capped_at_max_int_bits() -> None:
    from vbw.task.bounded import MAX_INT_BITS

    at_cap = (1 << MAX_INT_BITS) - 1
    assert render("{{ (x + 0) == x }}", {"x": at_cap}) == "True"
    with pytest.raises(PromptBudget, match="bits"):
        render("{{ (x + 1) == x }}", {"x": at_cap})
    assert render("{{ (2 ** p).bit_length() }}", {"p": MAX_INT_BITS - 1}) == \
        str(MAX_INT_BITS)
    with pytest.raises(PromptBudget):
        render("{{ (2 ** p).bit_length() }}", {"p": MAX_INT_BITS})


def test_indent_by_a_string_is_sized_at_the_budget() -> None:
    """The bound is the text plus a width for each of its lines: 4 + 2w characters."""
    w = (MAX_PROMPT_CHARS - 4) // 2
    assert render("{{ 'a\\nbc'|indent(w) }}", {"w": "x" * w}) == "a\n" + "x" * w + "bc"
    with pytest.raises(PromptBudget):
        render("{{ 'a\\nbc'|indent(w) }}", {"w": "x" * (w + 1)})


def test_batch_is_sized_at_the_budget() -> None:
    n = MAX_PROMPT_CHARS - 1  # the value's one element and n fill slots
    assert render("{{ [1]|batch(n)|list|length }}", {"n": n}) == "1"
    with pytest.raises(PromptBudget):
        render("{{ [1]|batch(n)|list|length }}", {"n": n + 1})


@pytest.mark.parametrize("name, keyword", [("batch", "linecount"), ("slice", "slices")])
def test_batch_and_slice_by_keyword_are_sized_at_the_budget(name: str, keyword: str) -> None:
    """The bound holds when the count and the fill value are passed by name: n slots of
    two fill characters pass at n = budget / 2 and one slot more is refused (the check
    alone: building half a million slots is the work the check exists to prevent)."""
    from vbw.task.templatefilters import _PRECHECK

    n = MAX_PROMPT_CHARS // 2
    _PRECHECK[name](MAX_PROMPT_CHARS, [1], **{keyword: n, "fill_with": "xx"})
    with pytest.raises(PromptBudget):
        _PRECHECK[name](MAX_PROMPT_CHARS, [1], **{keyword: n + 1, "fill_with": "xx"})


def test_output_of_references_is_sized_at_the_budget() -> None:
    """A list's text is its elements' reprs (quotes included) and ', ' between them."""
    half = (MAX_PROMPT_CHARS - 2 - 2 * 2 - 2 * 2) // 2  # [ ] + two (quotes) + two (', ')
    assert len(render("{{ [s, s] }}", {"s": "x" * half})) <= MAX_PROMPT_CHARS
    with pytest.raises(PromptBudget):
        render("{{ [s, s] }}", {"s": "x" * (half + 1)})
