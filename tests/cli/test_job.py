"""The pipeline's rules between a task and a replay: no silent shrinking of N, no N=0
report, the recorded replay found by mode=auto, run folders never shared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPLAYS, ROOT, load_json, one_line_error, run_vbw, start_vbw
from vbw.cli.run_folder import LOCK

GSM8K = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_replay_id_not_in_the_task_is_an_error(tmp_path: Path) -> None:
    lines = _lines(GSM8K)
    for i in (3, 7):  # rename two item ids, as a typo or another data version would
        rec = json.loads(lines[i])
        rec["id"] = rec["id"].replace("gsm8k_test_", "gsm8k_tset_")
        lines[i] = json.dumps(rec)
    replay = _write(tmp_path / "r.jsonl", lines)
    line = one_line_error(run_vbw("task=gsm8k", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                               cwd=tmp_path))
    assert "2 item id(s) are not in task gsm8k" in line
    assert "'gsm8k_tset_2', 'gsm8k_tset_6'" in line
    assert not (tmp_path / "o/report.json").exists()


def test_ids_beyond_n_or_first_are_explained_not_errors(tmp_path: Path) -> None:
    for args in (["n=50"], ["task.dataset.first=50"]):
        proc = run_vbw("task=gsm8k", f"replay={GSM8K}", *args, f"hydra.run.dir={tmp_path}/o",
                       cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        rep = load_json(tmp_path / "o/report.json")
        assert rep["n"] == rep["n_task"] == 50 and rep["missing"]["n"] == 0
        assert "warning" not in proc.stderr


def test_task_items_absent_from_the_replay_warn_and_are_reported(tmp_path: Path) -> None:
    lines = _lines(GSM8K)
    replay = _write(tmp_path / "r.jsonl", lines[:1] + lines[1:4] + lines[6:])  # drops 3, 4
    proc = run_vbw("task=gsm8k", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 of 200 task item(s) are not in" in proc.stderr
    assert "'gsm8k_test_3', 'gsm8k_test_4'" in proc.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["n"] == 198 and rep["n_task"] == 200
    assert rep["missing"] == {"n": 2, "ids": ["gsm8k_test_3", "gsm8k_test_4"]}
    assert "198 scored of 200 in the task" in (tmp_path / "o/report.md").read_text()
    assert rep["coverage"].startswith("198 scored of 200 in the task (none excluded; 2 missing")


def test_header_only_replay_is_exit_2_not_an_empty_table(tmp_path: Path) -> None:
    replay = _write(tmp_path / "r.jsonl", _lines(GSM8K)[:1])
    line = one_line_error(run_vbw("task=gsm8k", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                               cwd=tmp_path))
    assert "no item of task gsm8k can be scored" in line
    assert not (tmp_path / "o/report.json").exists()


def test_auto_mode_announces_the_recorded_replay(tmp_path: Path) -> None:
    proc = run_vbw("task=bfcl_simple", f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0].startswith(  # a note: stdout keeps the report
        "vbw: bfcl_simple: re-scoring the recorded replay")
    assert "re-scoring" not in proc.stdout
    explicit = run_vbw("task=bfcl_simple", "mode=replay", f"hydra.run.dir={tmp_path}/p",
                       cwd=tmp_path)
    assert "re-scoring" not in explicit.stderr  # an explicit mode needs no announcement


def test_two_runs_started_together_get_their_own_folders(tmp_path: Path) -> None:
    procs = [start_vbw("task=gsm8k", "n=20", cwd=tmp_path) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    reports = sorted(tmp_path.glob("vbw-runs/*/*/report.json"))
    assert len(reports) == 2 and reports[0].parent != reports[1].parent
    assert all(load_json(r)["n"] == 20 for r in reports)
    assert not list(tmp_path.rglob(LOCK))  # released


def test_a_folder_in_use_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """The second run is one line naming the folder, and writes nothing there (not even
    Hydra's .hydra/ files): the folder is claimed before Hydra sets the job up."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from vbw.cli.run_folder import claim; claim(Path(sys.argv[1])); "
         "print('held', flush=True); "
         "time.sleep(60)", str(tmp_path / "o")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        line = one_line_error(run_vbw("task=gsm8k", "n=5", f"hydra.run.dir={tmp_path}/o",
                                      cwd=tmp_path))
        assert line == (f"vbw: error: {tmp_path}/o is in use by another vbw run (pid "
                        f"{holder.pid}); give this run its own hydra.run.dir")
        assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [LOCK]
    finally:
        holder.kill()
        holder.wait()
