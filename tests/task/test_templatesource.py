"""A template's source is checked before it compiles (vbw.task.templatesource): size,
bracket nesting, syntax-tree depth and the allowed filters, each refused in one line at
its exact bound (issue 30, item 5)."""

from __future__ import annotations

import pytest

from vbw.task.prompts import compile_template, environment
from vbw.task.templatesource import (MAX_TEMPLATE_BRACKETS, MAX_TEMPLATE_CHARS,
                                     MAX_TEMPLATE_DEPTH, checked_parse)


def _refused(source: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as info:
        compile_template(source)
    assert "\n" not in str(info.value)


def test_source_size_at_the_cap() -> None:
    exact = "x" * MAX_TEMPLATE_CHARS
    compile_template(exact)
    _refused(exact + "x", "characters, over")


def test_brackets_at_the_cap() -> None:
    n = MAX_TEMPLATE_BRACKETS
    compile_template("{{ " + "(" * n + "1" + ")" * n + " }}")
    _refused("{{ " + "(" * (n + 1) + "1" + ")" * (n + 1) + " }}", "brackets nest deeper")
    _refused("{{ " + "[" * 500 + "]" * 500 + " }}", "brackets nest deeper")


def test_filter_chain_at_the_depth_cap() -> None:
    """Template > Output > n filters > the constant: n + 3 levels."""
    n = MAX_TEMPLATE_DEPTH - 3
    compile_template("{{ 1" + "|abs" * n + " }}")
    _refused("{{ 1" + "|abs" * (n + 1) + " }}", "nests deeper than")


@pytest.mark.parametrize("source", [
    "{{ 1" + "+1" * 5000 + " }}",        # an operator run: a deep tree
    "{{ " + "not " * 3000 + "1 }}",       # the parser recurses per `not`
    "{% if 1 %}" * 400 + "{% endif %}" * 400,
])
def test_deep_templates_are_one_line(source: str) -> None:
    _refused(source, "nests")


@pytest.mark.parametrize("name", ["urlize", "wordwrap", "striptags", "pprint", "random",
                                  "xmlattr", "tojson"])
def test_unbounded_filters_are_refused_at_load(name: str) -> None:
    _refused("{{ x|" + name + " }}", f"filter '{name}' is not allowed")


def test_lipsum_is_not_a_global() -> None:
    assert "lipsum" not in environment().globals
    assert checked_parse(environment(), "{{ x|json }}") is not None


def test_tests_are_allow_listed() -> None:
    from vbw.task.templatefilters import ALLOWED_TESTS

    assert set(environment().tests) == ALLOWED_TESTS
    compile_template("{{ 3 is odd }}")
    _refused("{{ 3 is prime }}", "test 'prime' is not allowed")
