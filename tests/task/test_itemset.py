"""Building items from rows: a task path (a field, the gold, the id) that finds nothing in
a row is one line naming the task file, the field, the path and the row, listing the names
the row has (at most SHOWN_NAMES, then `...`), so a typo is seen beside its right spelling;
a checker that cannot score an item's gold refuses it in one line naming the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import DATA, TASK_CONF, one_line_error, portable_task, run_vbw
from vbw.errors import DataError
from vbw.task.base import SHOWN_NAMES, field_names
from vbw.task.runner import load_task

GSM8K = (DATA / "gsm8k" / "test.jsonl").resolve()


def _error(tmp_path: Path, mutate: Callable[[dict], None], task: str = "gsm8k") -> str:
    data = portable_task(task)
    mutate(data)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(DataError) as e:
        load_task(path).items(3)
    assert "\n" not in str(e.value)
    return str(e.value).removeprefix(f"{path}: ")


@pytest.mark.parametrize(("mutate", "line"), [
    (lambda d: d["dataset"]["fields"].__setitem__("question", "questoin"),
     f"dataset.fields.question: 'questoin' finds nothing in row 0 (gsm8k_test_0) of {GSM8K}; "
     "the row's fields are: question, answer"),
    (lambda d: d["dataset"]["gold"].__setitem__("path", "answr"),
     f"dataset.gold.path: 'answr' finds nothing in row 0 (gsm8k_test_0) of {GSM8K}; the "
     "row's fields are: question, answer"),
    (lambda d: d["dataset"].__setitem__("id", {"kind": "path", "path": "uid"}),
     f"dataset.id.path: 'uid' finds nothing in row 0 of {GSM8K}; the row's fields are: "
     "question, answer"),
])
def test_a_path_finding_nothing_lists_the_row_s_fields(tmp_path: Path, mutate: Callable,
                                                       line: str) -> None:
    assert _error(tmp_path, mutate) == line


def test_the_fix_it_points_at_loads(tmp_path: Path) -> None:
    """The names listed are the row's own: the right spelling builds the items."""
    data = portable_task("gsm8k")
    data["dataset"]["gold"]["path"] = "answer"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert len(load_task(path).items(3)) == 3


def test_the_names_are_bounded(tmp_path: Path) -> None:
    row = {f"f{i}": i for i in range(SHOWN_NAMES + 5)}
    assert field_names(row) == ", ".join(f"f{i}" for i in range(SHOWN_NAMES)) + ", ..."
    assert field_names({f"f{i}": i for i in range(SHOWN_NAMES)}).endswith(f"f{SHOWN_NAMES - 1}")
    assert field_names({"a\nb": 1, "x" * 50: 2}) == f"'a\\nb', {'x' * 37}..."
    rows = tmp_path / "d.jsonl"
    rows.write_text(json.dumps({**row, "q": "x", "a": 1}) + "\n", encoding="utf-8")
    data = portable_task("gsm8k")
    data["dataset"] = {"path": str(rows), "id": {"kind": "row_index", "prefix": "r"},
                       "fields": {"question": "q"}, "gold": {"path": "answ"}}
    line = _error(tmp_path, lambda d: d.update(data))
    assert line.endswith("the row's fields are: " + field_names(row))


def test_an_extract_giving_nothing_is_told_apart(tmp_path: Path) -> None:
    line = _error(tmp_path, lambda d: d["dataset"]["gold"]["extract"][0].__setitem__(
        "pattern", "@@@(.*)$"))
    assert line.startswith("dataset.gold: its extract and coerce steps give no gold from "
                           "'Janet sells ...")
    assert line.endswith(f"(at 'answer') in row 0 (gsm8k_test_0) of {GSM8K}")


@pytest.mark.parametrize("task", ["bfcl_multiple", "bfcl_parallel", "bfcl_parallel_multiple"])
def test_simplified_rules_on_lists_of_calls_are_refused(task: str, tmp_path: Path) -> None:
    """`simplified` matches one call; these tasks' golds are lists of calls, which it
    would score wrong whatever the answer: one line naming the task, the field, the value
    and bfcl_official."""
    line = one_line_error(run_vbw(f"task={task}", "task.check.rules=simplified",
                                  "task.dataset.first=2", "mode=check", cwd=tmp_path))
    first = {"bfcl_multiple": "multiple_0", "bfcl_parallel": "parallel_0",
             "bfcl_parallel_multiple": "parallel_multiple_0"}[task]
    assert line == (f"vbw: error: {TASK_CONF / task}.yaml: task {task}, item {first}: "
                    "task.check.rules=simplified matches one call's arguments, and this gold "
                    "is a list of calls (every answer would be scored wrong); use "
                    "task.check.rules=bfcl_official, the rule for lists of calls")


def test_simplified_rules_still_score_one_call(tmp_path: Path) -> None:
    assert load_task(TASK_CONF / "bfcl_simple.yaml").spec.check.rules == "simplified"
    assert len(load_task(TASK_CONF / "bfcl_simple.yaml").items(3)) == 3
