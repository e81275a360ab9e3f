"""vbw.sweep.outcome: the launching process reads a sweep's exit code from the
summary.json the sweep wrote, told where it is through a file it owns; no module state."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from tests.conftest import load_json, run_vbw
from vbw.sweep import callback
from vbw.sweep.outcome import SWEEP_DIR_FILE, read_exit_code, sweep_dir_told, tell_launcher


def test_the_sweep_end_tells_where_its_summary_is(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"exit_code": 1, "rows": []}))
    assert SWEEP_DIR_FILE not in os.environ
    with sweep_dir_told() as told:
        pointer = Path(os.environ[SWEEP_DIR_FILE])
        assert told() is None  # no sweep ended yet
        tell_launcher(tmp_path)
        assert told() == tmp_path.resolve()
        assert read_exit_code(told()) == 1
    assert SWEEP_DIR_FILE not in os.environ and not pointer.exists()


def test_nobody_to_tell_outside_vbw(tmp_path: Path) -> None:
    assert SWEEP_DIR_FILE not in os.environ
    tell_launcher(tmp_path)  # e.g. finish_sweep driven by another program: nothing written
    assert list(tmp_path.iterdir()) == []


def test_the_callback_keeps_no_module_level_state() -> None:
    tree = ast.parse(Path(callback.__file__).read_text(encoding="utf-8"))
    assigned = [t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Name)]
    assert assigned == []


def test_a_sweep_exits_with_the_code_its_summary_holds(tmp_path: Path) -> None:
    # job 1 trips the gate (1), job 0 does not; outputs=[json,md]: no summary.html
    proc = run_vbw("-m", "task=gsm8k", "mode=replay", "n=10", "outputs=[json,md]",
                   "gate.wrong_valid_above=0.99,0.0", f"hydra.sweep.dir={tmp_path}/s",
                   cwd=tmp_path, timeout=300)
    summary = load_json(tmp_path / "s/summary.json")
    assert [r["exit_code"] for r in summary["rows"]] == [0, 1]
    assert proc.returncode == summary["exit_code"] == 1, proc.stderr
    assert (tmp_path / "s/summary.md").is_file() and not (tmp_path / "s/summary.html").exists()
    assert sorted(p.name for p in (tmp_path / "s/0").glob("report.*")) == ["report.json",
                                                                          "report.md"]
