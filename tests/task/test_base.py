"""vbw.task.base.search walks plain dotted paths itself; it must answer as JMESPath does."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest

from vbw.task.base import _fields, search

DATA: list[Any] = [{"a": {"b": 1}}, {"a": {"b": None}}, {"a": [1]}, {"a": "x"}, {"a": 0},
                   {"true": 2, "null": 3}, [{"a": 1}], "a", None, 1.5, {"a": {"b": {"c": []}}},
                   {"_x1": {"B": False}}]
PATHS = ["a", "a.b", "a.b.c", "true", "null", "_x1.B", "b", "a.b.c.d"]


@pytest.mark.parametrize("path", PATHS)
def test_plain_paths_answer_as_jmespath(path: str) -> None:
    assert _fields(path) is not None
    for data in DATA:
        assert search(path, data) == jmespath.search(path, data), (path, data)


@pytest.mark.parametrize("path", ["@", "a[0]", "a.\"b c\"", "a || b", "a.*"])
def test_other_expressions_go_to_jmespath(path: str) -> None:
    assert _fields(path) is None
    for data in DATA:
        assert search(path, data) == jmespath.search(path, data)
