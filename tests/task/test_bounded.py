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
