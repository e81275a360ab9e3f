"""Reading a schema for the instance builder: allOf merged in bounded work, enums
intersected by value in linear time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from vbw.task import instance
from vbw.task.instance import Unbuildable, minimal, unsatisfiable
from vbw.task.schema.walk import DEPTH, WORK, Budget, TooMuchWork, canonical, merged


def test_the_budget_holds_exactly_its_units() -> None:
    budget = Budget()
    budget.spend(WORK)  # at the cap: passes
    with pytest.raises(TooMuchWork, match=f"over {WORK:,} units"):
        budget.spend(1)
    assert issubclass(TooMuchWork, Unbuildable)  # a skipped check, never a verdict


def test_canonical_forms_are_json_equality() -> None:
    def key(v: Any) -> Any:
        return canonical(v, Budget())
    assert key(1) == key(1.0) and key(True) != key(1) and key(False) != key(0)
    assert key(None) != key(False) and key("1") != key(1)
    assert key({"a": 1, "b": [2]}) == key({"b": [2.0], "a": 1})
    assert key([1, 2]) != key([2, 1]) and key({"a": True}) != key({"a": 1})


def test_canonical_nesting_is_bounded_at_depth() -> None:
    def nested(levels: int) -> Any:
        v: Any = 0
        for _ in range(levels):
            v = [v]
        return v
    canonical(nested(DEPTH), Budget())
    with pytest.raises(Unbuildable, match="nested too deeply"):
        canonical(nested(DEPTH + 1), Budget())


def test_enums_intersect_by_json_value() -> None:
    node = merged({"allOf": [{"enum": [1, True, {"a": 1, "b": 2}, [1], "x"]},
                             {"enum": [1.0, {"b": 2, "a": 1}, [1.0], False]}]}, None, 0)
    assert node == {"enum": [1, {"a": 1, "b": 2}, [1]]}


def test_two_large_enums_intersect_in_linear_time() -> None:
    """Two 40,000-value enums: 1.6 billion comparisons before (killed at 300 s)."""
    n = 40_000
    start = time.perf_counter()
    shared = {"allOf": [{"enum": list(range(n))}, {"enum": list(range(n - 1, 2 * n))}]}
    assert minimal(shared) == n - 1
    disjoint = {"allOf": [{"enum": list(range(n))}, {"enum": list(range(n, 2 * n))}]}
    assert unsatisfiable(disjoint) == "enum is empty"
    assert time.perf_counter() - start < 2.0


def _ref_doubling(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2}
                            for i in range(levels)}
    defs[f"d{levels}"] = {"type": "integer"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def test_work_that_doubles_at_each_level_stops_at_the_budget() -> None:
    """2**25 paths through $refs: out of budget in about a second, and a schema out of
    budget once is not built again (mode=check builds up to ten instances an item)."""
    schema = _ref_doubling(25)
    start = time.perf_counter()
    with pytest.raises(TooMuchWork):
        minimal(schema)
    first = time.perf_counter() - start
    start = time.perf_counter()
    with pytest.raises(TooMuchWork):
        instance.with_value(schema, ["x"], 1)
    assert first < 5.0 and time.perf_counter() - start < 0.01
    assert minimal(_ref_doubling(4)) == 0  # 16 paths: built


def test_the_heavy_schemas_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instance, "_HEAVY", {})
    schemas = [{"type": "integer"} for _ in range(instance.HEAVY_KEPT + 1)]
    for s in schemas[:instance.HEAVY_KEPT]:
        instance._remember_heavy(s, TooMuchWork("x"))
    assert len(instance._HEAVY) == instance.HEAVY_KEPT  # at the cap: all kept
    instance._remember_heavy(schemas[-1], TooMuchWork("x"))
    assert len(instance._HEAVY) == 1  # one over: started afresh
