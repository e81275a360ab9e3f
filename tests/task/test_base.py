"""vbw.task.base.search walks plain paths (fields, list indexes) itself; it must answer as
JMESPath does."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest

from vbw.task.base import _steps, search

DATA: list[Any] = [{"a": {"b": 1}}, {"a": {"b": None}}, {"a": [1]}, {"a": "x"}, {"a": 0},
                   {"true": 2, "null": 3}, [{"a": 1}], "a", None, 1.5, {"a": {"b": {"c": []}}},
                   {"_x1": {"B": False}}]
PATHS = ["a", "a.b", "a.b.c", "true", "null", "_x1.B", "b", "a.b.c.d", "@"]


@pytest.mark.parametrize("path", PATHS)
def test_plain_paths_answer_as_jmespath(path: str) -> None:
    assert _steps(path) is not None
    for data in DATA:
        assert search(path, data) == jmespath.search(path, data), (path, data)


@pytest.mark.parametrize("path", ["@.a", " @", "a[*]", "a.\"b c\"", "a || b", "a.*"])
def test_other_expressions_go_to_jmespath(path: str) -> None:
    assert _steps(path) is None
    for data in DATA:
        assert search(path, data) == jmespath.search(path, data)


def test_plain_paths_are_walked_as_jmespath_evaluates_them() -> None:
    """search()'s direct walk of fields and indexes gives JMESPath's value on every
    path and document, and anything else goes to JMESPath."""
    import random

    rng = random.Random(3)

    def doc(depth: int) -> object:
        if depth == 0 or rng.random() < 0.2:
            return rng.choice([None, 0, "s", True, 1.5, [], {}])
        if rng.random() < 0.5:
            return [doc(depth - 1) for _ in range(rng.randint(0, 3))]
        return {k: doc(depth - 1) for k in rng.sample(["a", "b", "c_1", "true"], 2)}

    steps = [".a", ".b", ".c_1", ".true", "[0]", "[1]", "[-1]", "[-3]", "[00]"]
    for _ in range(3000):
        expr = rng.choice(["a", "b", "true"]) + "".join(rng.choice(steps)
                                                       for _ in range(rng.randint(0, 4)))
        data = {"a": doc(4), "b": doc(3), "true": doc(2)}
        assert _steps(expr) is not None, expr
        assert search(expr, data) == jmespath.search(expr, data), expr
    assert _steps("@") == () and search("@", data) == jmespath.search("@", data)
    for expr in ("a[*]", "a[0:1]", "values(a)[0]", "a.b[?x]", "[0]", "a .b", "a[ 0]", "@.a"):
        assert _steps(expr) is None, expr
