"""The `vbw` entry point: exit codes, one-line errors, gate, --help, --cfg, n=, replay=."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, load_json, one_line_error, portable_task, run_vbw


def test_gate_trips_with_exit_1(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "gate.wrong_valid_above=0.2", f"hydra.run.dir={tmp_path}",
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "constrained[answer] (94.5%)" in proc.stderr
    assert "constrained[reasoning] (80.0%)" in proc.stderr
    assert "reason_then_constrain" not in proc.stderr     # not gated
    assert (tmp_path / "report.json").is_file()


def test_gate_not_tripped_exits_0(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "gate.wrong_valid_above=0.95", f"hydra.run.dir={tmp_path}",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_unknown_task_exit_2(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task=nope", cwd=tmp_path))
    assert "task=nope" in line and "bfcl_simple" in line and "gsm8k" in line


def test_unknown_key_exit_2(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task=gsm8k", "+gate.wrong_valid_abov=0.2",
                                   f"hydra.run.dir={tmp_path}", cwd=tmp_path))
    assert "gate.wrong_valid_abov" in line


def test_bad_value_exit_2(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task=gsm8k", "n=-3", f"hydra.run.dir={tmp_path}",
                                   cwd=tmp_path))
    assert "config: n:" in line and "-3" in line


def test_misspelled_key_in_task_file_exit_2(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["chek"] = data.pop("check")
    (tmp_path / "mytask.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    line = one_line_error(run_vbw("task.files=[mytask.yaml]", f"hydra.run.dir={tmp_path}/o",
                                   cwd=tmp_path))
    assert "mytask.yaml" in line and "chek: unknown key" in line and "did you mean 'check'" in line


def test_missing_replay_combination_lists_available(tmp_path: Path) -> None:
    line = one_line_error(run_vbw("task=gsm8k", "engine=llamacpp", "mode=replay",
                                   f"hydra.run.dir={tmp_path}", cwd=tmp_path))
    assert "no replay for task=gsm8k model=qwen2_5_0_5b engine=llamacpp" in line
    assert "gsm8k/qwen2_5_0_5b/outlines" in line


def test_card_command_rescores_a_recorded_replay(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "engine=llamacpp", "model=smollm2_135m",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]  # a note: stdout keeps the report
    assert "re-scoring the recorded replay" in first and "llamacpp.jsonl" in first
    assert "re-scoring" not in proc.stdout
    assert load_json(tmp_path / "report.json")["mode"] == "replay"


def test_card_command_without_replay_or_model_is_one_actionable_line(tmp_path: Path) -> None:
    """`vbw task=gsm8k engine=llamacpp` on a fresh install: no Qwen replay for llamacpp, so
    mode=auto goes live; offline without the model that is one line naming the no-hub
    model, exit 2, and no download retries on stderr."""
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = run_vbw("task=gsm8k", "engine=llamacpp", f"hydra.run.dir={tmp_path}/o",
                   cwd=tmp_path, env=env, timeout=60)
    line = one_line_error(proc)
    assert "no recorded replay for gsm8k x qwen2_5_0_5b x llamacpp" in line
    assert "model=smollm2_135m" in line and "model.path=" in line


def test_card_command_without_the_live_extra(tmp_path: Path) -> None:
    """A missing live extra is simulated by a `llama_cpp` that fails to import."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "llama_cpp.py").write_text("raise ImportError('No module named llama_cpp')\n")
    line = one_line_error(run_vbw("task=gsm8k", "engine=llamacpp",
                                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path,
                                   pythonpath=(shadow,)))
    assert "no recorded replay for gsm8k x qwen2_5_0_5b x llamacpp" in line
    assert "pip install 'validbutwrong[live]'" in line and "model=smollm2_135m" in line


def test_n_scores_first_items_and_user_task_with_replay(tmp_path: Path) -> None:
    shutil.copy(ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl", tmp_path / "r.jsonl")
    proc = run_vbw("task=gsm8k", "n=50", "replay=r.jsonl", f"hydra.run.dir={tmp_path}/o",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["n"] == 50 and rep["ledger"][-1]["id"] == "gsm8k_test_49"
    assert "N=50" in proc.stdout


def test_arms_headline_scores_only_the_pair(tmp_path: Path) -> None:
    proc = run_vbw("task=bfcl_simple", "arms=headline", f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "report.json")
    assert list(rep["arms"]) == ["prompt_json[arguments]", "constrained[arguments]"]
    assert len(rep["comparisons"]) == 1


def test_replay_for_other_task_refused(tmp_path: Path) -> None:
    line = one_line_error(run_vbw(
        "task=gsm8k", f"replay={ROOT / 'replays/bfcl_simple/qwen2_5_0_5b/outlines.jsonl'}",
        f"hydra.run.dir={tmp_path}", cwd=tmp_path))
    assert "meta.task is 'bfcl-simple', not 'gsm8k'" in line


def test_help_and_cfg(tmp_path: Path) -> None:
    h = run_vbw("--help", cwd=tmp_path)
    assert h.returncode == 0 and "wrong-but-valid" in h.stdout and "model: qwen2_5_0_5b, smollm2_135m" in h.stdout
    c = run_vbw("--cfg", "job", "task=gsm8k", "engine=llamacpp", cwd=tmp_path)
    assert c.returncode == 0
    job = yaml.safe_load(c.stdout)
    assert job["engine"]["name"] == "llamacpp" and job["task"]["name"] == "gsm8k"
    assert job["task"]["dataset"]["first"] == 200  # the task itself is the config


def test_multirun_sweep_runs_every_job_and_keeps_the_gate(tmp_path: Path) -> None:
    proc = run_vbw("-m", "task=gsm8k,bfcl_simple", "gate.wrong_valid_above=0.5",
                   f"hydra.sweep.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr     # gsm8k trips, bfcl does not; both ran
    tasks = sorted(load_json(p)["task"] for p in tmp_path.glob("*/report.json"))
    assert tasks == ["bfcl_simple", "gsm8k"]
    assert "gsm8k: constrained[answer]" in proc.stderr


def test_arms_schemas_scores_one_schema_s_arms(tmp_path: Path) -> None:
    """arms.schemas=[reasoning] scores GSM8K's reasoning arms (and unconstrained) from the
    full replay; the task is not edited, so the replay still matches it."""
    proc = run_vbw("task=gsm8k", "n=20", "arms.schemas=[reasoning]",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "report.json")
    assert list(rep["arms"]) == ["unconstrained", "prompt_json[reasoning]",
                                 "constrained[reasoning]"]
    assert [(c["from"], c["to"]) for c in rep["comparisons"]] == [
        ("prompt_json[reasoning]", "constrained[reasoning]"),
        ("unconstrained", "constrained[reasoning]")]
    full = run_vbw("task=gsm8k", "n=20", f"hydra.run.dir={tmp_path}/all", cwd=tmp_path)
    every = load_json(tmp_path / "all/report.json")
    for key, arm in rep["arms"].items():  # the same arm scores the same either way
        assert arm == every["arms"][key], key
    assert full.returncode == 0


@pytest.mark.parametrize("mode", ["replay", "check", "compare", "live"])
def test_an_unknown_arms_schema_is_one_line_in_every_mode(tmp_path: Path, mode: str) -> None:
    replay = ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl"
    extra = [f"replays=[{replay},{replay}]"] if mode == "compare" else []
    line = one_line_error(run_vbw("task=gsm8k", f"mode={mode}", "arms.schemas=[ticket]",
                                  *extra, f"hydra.run.dir={tmp_path}", cwd=tmp_path))
    assert line == ("vbw: error: arms.schemas: 'ticket' is not a schema of task gsm8k (its "
                    "schemas: answer, reasoning)")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("warm", ["2", "1"])
def test_no_room_for_the_output_is_one_line_exit_2(tmp_path: Path, warm: str) -> None:
    """`vbw > /dev/full` (a full disk): the environment's doing, not a bug (exit 3)."""
    with open("/dev/full", "w") as full:
        # mode=replay: mode=auto's note on the replay it re-scores would be on stderr too
        proc = run_vbw("task=gsm8k", "n=5", "mode=replay", f"hydra.run.dir={tmp_path}",
                       cwd=tmp_path, env={"VBW_PROCESSES": warm}, stdout=full)
    proc.stdout = ""
    assert one_line_error(proc) == "vbw: error: cannot write: No space left on device"
    with open("/dev/full", "w") as full:  # Hydra's own output, too
        proc = run_vbw("--help", cwd=tmp_path, env={"VBW_PROCESSES": warm}, stdout=full)
    proc.stdout = ""
    assert one_line_error(proc) == "vbw: error: cannot write: No space left on device"
