"""Every task item selected for scoring is scored, excluded or missing from the replay:
report.json counts the selection (n_task) and lists the missing ids, report.md says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPLAYS, load_json, run_vbw
from vbw.score.metrics import build_report
from vbw.score.states import ItemStates
from vbw.task.arms import Arm

GSM8K = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"
DROPPED = [1, 4, 9]  # gsm8k_test_<k> left out of the replay


def _partial_replay(tmp_path: Path) -> Path:
    """The header and items 0-11 of the bundled GSM8K replay, without items DROPPED."""
    lines = GSM8K.read_text(encoding="utf-8").splitlines()
    kept = [lines[0]] + [lines[1 + k] for k in range(12) if k not in DROPPED]
    path = tmp_path / "partial.jsonl"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


def test_report_counts_the_task_selection_and_names_missing_items(tmp_path: Path) -> None:
    replay = _partial_replay(tmp_path)
    proc = run_vbw("task=gsm8k", "n=10", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["n"] == 7 and rep["n_task"] == 10
    assert rep["missing"] == {"n": 3, "ids": ["gsm8k_test_1", "gsm8k_test_4", "gsm8k_test_9"]}
    assert rep["excluded"]["n"] == 0
    sentence = ("7 scored of 10 in the task (none excluded; 3 missing from the replay: "
                "gsm8k_test_1, gsm8k_test_4, gsm8k_test_9).")
    assert sentence in (tmp_path / "o/report.md").read_text(encoding="utf-8")
    assert sentence in proc.stdout


def test_without_n_the_task_selection_is_scored(tmp_path: Path) -> None:
    replay = _partial_replay(tmp_path)
    proc = run_vbw("task=gsm8k", f"replay={replay}", f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "o/report.json")  # the bundled task selects first: 200
    assert rep["n"] == 9 and rep["n_task"] == 200 and rep["missing"]["n"] == 191
    assert len(rep["missing"]["ids"]) == 191  # all of them, not only the five printed
    assert ("9 scored of 200 in the task (none excluded; 191 missing from the replay: "
            "gsm8k_test_1, gsm8k_test_4, gsm8k_test_9, gsm8k_test_12, gsm8k_test_13, "
            "+186 more).") in proc.stdout
    # the warning on stderr says the same, with the first ids
    assert "191 of 200 task item(s) are not in" in proc.stderr and "'gsm8k_test_1'" in proc.stderr


def test_first_null_selects_the_whole_dataset(tmp_path: Path) -> None:
    replay = _partial_replay(tmp_path)
    proc = run_vbw("task=gsm8k", "task.dataset.first=null", f"replay={replay}",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["n"] == 9 and rep["n_task"] == 1319 and rep["missing"]["n"] == 1310


def test_counts_must_add_up() -> None:
    st = ItemStates(ids=["a"], arms=[Arm("unconstrained", None)], valid=np.array([[-1]], np.int8),
                    right=np.array([[True]]), excluded=["b"], excluded_reasons={"b": "x"})
    kw = dict(task="t", label="acc", mode="replay", meta={}, source="x", provenance="p",
              seed=0, resamples=100)
    r = build_report(st, **kw, n_task=3, missing=["c"])  # type: ignore[arg-type]
    assert (r.n, r.n_task, r.excluded.n, r.missing.n, r.missing.ids) == (1, 3, 1, 1, ["c"])
    with pytest.raises(ValueError, match="n_task=4 but 1 scored"):
        build_report(st, **kw, n_task=4, missing=["c"])  # type: ignore[arg-type]
