"""Hostile input, round 4 (tests/hostile4): every case ends as the contract says, in its
time and memory bounds, with nothing secret written or printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile4 import Case, all_cases, check, run

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_case(case: Case, tmp_path: Path) -> None:
    check(case, run(case, tmp_path))
