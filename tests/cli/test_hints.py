"""The fixes a command-line error suggests (vbw.cli.hints) run as written: the hint for an
override of a key the config lacks, and the layout a --config-dir without task/ needs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, one_line_error, run_vbw

CAPITALS = ("--config-dir", str(EXAMPLE), "task=capitals")


def _hinted(line: str) -> str:
    """The override the line says to write."""
    found = re.search(r"\bwrite (\S+?)(?:;|$)", line)
    assert found, line
    return found.group(1)


@pytest.mark.parametrize("given,bad,fix", [
    (("task=gsm8k",), "task.labl=x", "task.label=x"),                # a typo: the key read
    (("task=gsm8k",), "gate.wrong_valid_abve=0.2", "gate.wrong_valid_above=0.2"),
    (CAPITALS, "task.dataset.exclud=[cap_france]", "+task.dataset.exclude=[cap_france]"),
    (CAPITALS, "task.dataset.exclude=[cap_france]", "+task.dataset.exclude=[cap_france]"),
    (("task=gsm8k",), "hydra.job.env_set.VBW_HINT=1", "+hydra.job.env_set.VBW_HINT=1"),
])
def test_the_hinted_override_runs(tmp_path: Path, given: tuple[str, ...], bad: str,
                                  fix: str) -> None:
    """Following the hint is one step: the hinted command line runs (a typo gets the key
    vbw reads; `+` only for a key vbw reads that the config leaves unset, or Hydra's own)."""
    line = one_line_error(run_vbw(*given, bad, "mode=check", f"hydra.run.dir={tmp_path}/a",
                                  cwd=tmp_path))
    assert line.startswith(f"vbw: error: {bad}: ") and _hinted(line) == fix, line
    fixed = run_vbw(*given, fix, "mode=check", f"hydra.run.dir={tmp_path}/b", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "error" not in fixed.stderr


def test_the_hinted_plus_sets_the_key(tmp_path: Path) -> None:
    fix = _hinted(one_line_error(run_vbw(*CAPITALS, "task.dataset.exclud=[cap_france]",
                                         "mode=check", cwd=tmp_path)))
    fixed = run_vbw(*CAPITALS, fix, "mode=check", cwd=tmp_path)
    assert fixed.returncode == 0 and "capitals: 11 items" in fixed.stdout, fixed.stderr


def test_no_plus_for_a_key_vbw_does_not_read(tmp_path: Path) -> None:
    """`+key` for a key no model reads would fail with a second error: it is not offered."""
    line = one_line_error(run_vbw("task=gsm8k", "task.zzz=1", "mode=check", cwd=tmp_path))
    assert line == ("vbw: error: task.zzz=1: no such config key; valid under task: name, "
                    "label, description, dataset, prompts, schemas, answer_schema, extract, "
                    "coerce, check, fields, tool")


def test_a_task_field_on_a_selection_asks_for_one_task(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task.label=x", "mode=check", cwd=tmp_path))
    assert "selection of task files" in line and "task=NAME task.label=x" in line
    fixed = run_vbw("task=gsm8k", "task.label=x", "mode=check", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr


def test_a_config_dir_without_task_folder_says_the_layout(tmp_path: Path) -> None:
    """A folder of task files given as --config-dir: one line with the layout Hydra reads
    and the file itself as the alternative, which runs."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copy(EXAMPLE / "task/capitals.yaml", tasks)
    shutil.copytree(EXAMPLE / "data", tmp_path / "data")  # the task's ../data/ path
    line = one_line_error(run_vbw("--config-dir", str(tasks), "task=capitals", "mode=check",
                                  cwd=tmp_path))
    assert (f"--config-dir {tasks} has no task/ folder: a task config is read from "
            f"<dir>/task/<name>.yaml (here {tasks / 'task/capitals.yaml'}); or run the file "
            f"itself: task={tasks / 'capitals.yaml'};") in line
    fixed = run_vbw(f"task={tasks / 'capitals.yaml'}", "mode=check", cwd=tmp_path)
    assert fixed.returncode == 0 and "capitals: 12 items" in fixed.stdout, fixed.stderr
    (tmp_path / "conf/task").mkdir(parents=True)  # the layout it names runs too
    (tmp_path / "conf/data").symlink_to(tmp_path / "data")
    shutil.copy(EXAMPLE / "task/capitals.yaml", tmp_path / "conf/task")
    laid_out = run_vbw("--config-dir", str(tmp_path / "conf"), "task=capitals", "mode=check",
                       cwd=tmp_path)
    assert laid_out.returncode == 0, laid_out.stderr
