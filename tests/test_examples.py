"""The committed example of a user's own task (examples/qa: task/, data/, recorded/) runs by
name in replay mode and check mode; its replay matches the task as committed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import EXAMPLE, load_json, run_vbw

BY_NAME = ("--config-dir", str(EXAMPLE), "task=capitals", "model=smollm2_135m")


def test_example_replay_by_name(tmp_path: Path) -> None:
    proc = run_vbw(*BY_NAME, f"replays_dir={EXAMPLE / 'recorded'}", f"hydra.run.dir={tmp_path}",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "re-scoring the recorded replay" in proc.stderr.splitlines()[0]
    rep = load_json(tmp_path / "report.json")
    assert rep["task"] == "capitals" and rep["n"] == rep["n_task"] == 12
    assert rep["correctness_label"] == "exact-match accuracy"
    assert list(rep["arms"]) == ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                                 "reason_then_constrain[answer]"]


def test_example_check_by_name(tmp_path: Path) -> None:
    proc = run_vbw(*BY_NAME, "mode=check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "capitals: 12 items, 1 distinct schema(s)" in proc.stdout
    assert "What is the capital of France?" in proc.stdout and '"Paris"' in proc.stdout


def test_example_without_its_replay_folder_would_go_live(tmp_path: Path) -> None:
    """mode=replay without replays_dir: the bundled replays have no capitals replay."""
    proc = run_vbw(*BY_NAME, "mode=replay", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no replay for task=capitals model=smollm2_135m engine=outlines" in proc.stderr
