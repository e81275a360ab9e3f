"""Strings read off a regex: every one kept by a caller is checked by the real matcher, so
these tests ask that the proposals do match where the pattern is invertible, stay short,
and come back empty (not wrong) where it is not."""

from __future__ import annotations

import re
import sys
import time

import pytest

from vbw.task.regexample import CAP, MAX_CHARS, examples


@pytest.mark.parametrize("pattern", [
    r"\d{3}-\d{4}", r"^[A-Z][a-z]+$", r"colou?r", r"(?i)yes|no",
    r"[\w.]+@\w+\.com", r"[^a]b", r"a.c", r"\s\S\W\D", r"(?:ab|cd){2,3}", r"[a-f0-9]{8}",
    r"\$\d+(?:\.\d\d)?", r"[ABC]+", r"(?P<x>q)r",
])
def test_examples_fullmatch(pattern: str) -> None:
    found = examples(pattern)
    assert found and len(found) <= CAP
    assert all(re.fullmatch(pattern, s) for s in found), found
    assert found == sorted(found, key=len)  # shortest first


@pytest.mark.parametrize("pattern", [r"x*+y", r"(?>ab)c"])
def test_possessive_and_atomic_where_python_parses_them(pattern: str) -> None:
    """Python 3.11+ syntax: inverted there; on 3.10, whose parser refuses it, no example."""
    found = examples(pattern)
    if sys.version_info >= (3, 11):
        assert found and all(re.fullmatch(pattern, s) for s in found), found
    else:
        assert found == []


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a{5000}", "[", r"[^a0 A_\-.zZ9x!]"])
def test_no_example_rather_than_a_wrong_one(pattern: str) -> None:
    assert examples(pattern) == []


def test_alternatives_are_proposed() -> None:
    assert set(examples(r"cat|dog")) == {"cat", "dog"}


def test_bounded_on_a_large_pattern() -> None:
    pattern = "(?:a|b|c|d)" * 200
    start = time.perf_counter()
    found = examples(pattern)
    assert time.perf_counter() - start < 1.0
    assert len(found) <= CAP and all(len(s) <= MAX_CHARS for s in found)
    assert all(re.fullmatch(pattern, s) for s in found)
