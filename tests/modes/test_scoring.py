"""The wrong-but-valid gate (vbw.modes.scoring): a constrained arm trips it when its rate
EXCEEDS gate.wrong_valid_above; a rate exactly at the threshold, as a user types it, does
not. On hand-made item states (the rate is k of n items) and on a committed replay. And a
replay scored with allow_task_mismatch=true although its task hash differs: said on
stderr, in report.md and in report.json's task_mismatch."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.errors import ReplayError
from vbw.modes.scoring import tripped_arms
from vbw.report.numbers import pct
from vbw.score.metrics import build_report
from vbw.score.results import Report
from vbw.score.states import ItemStates
from vbw.task.arms import parse_arm
from vbw.task.runner import load_task

ARMS = [parse_arm(k) for k in ("prompt_json[s]", "constrained[s]", "reason_then_constrain[s]")]


def _report(n: int, wrong_valid: int) -> Report:
    """n items; on every arm the first `wrong_valid` are valid and wrong, the rest valid
    and right."""
    wrong = np.arange(n) < wrong_valid
    right = np.repeat(~wrong[:, None], len(ARMS), axis=1)
    states = ItemStates(ids=[f"x{i}" for i in range(n)], arms=ARMS,
                        valid=np.ones((n, len(ARMS)), np.int8), right=right,
                        excluded=[], excluded_reasons={})
    return build_report(states, task="t", label="acc", mode="replay", meta={}, source="r",
                        provenance="p", seed=0, resamples=20, n_task=n, missing=[])


# (k, n): rates whose decimal a user would type; 1/3 typed as its shortest repr
@pytest.mark.parametrize("k,n", [(1, 4), (3, 10), (7, 10), (1, 3), (2, 3), (0, 5), (5, 5)])
def test_a_rate_exactly_at_the_threshold_does_not_trip(k: int, n: int) -> None:
    typed = float(str(k / n))  # what gate.wrong_valid_above=<that decimal> holds
    at = _report(n, k)
    assert at.arms["constrained[s]"].wrong_but_valid.rate == typed
    assert tripped_arms(at, ARMS, typed) == []


@pytest.mark.parametrize("k,n", [(1, 4), (3, 10), (7, 10), (1, 3), (2, 3), (0, 5)])
def test_one_item_above_the_threshold_trips_only_the_constrained_arm(k: int, n: int) -> None:
    above = _report(n, k + 1)
    rate = above.arms["constrained[s]"].wrong_but_valid.rate
    assert tripped_arms(above, ARMS, float(str(k / n))) == [f"constrained[s] ({pct(rate)})"]


def _gsm8k(tmp_path: Path, gate: float | None) -> tuple[int, str, dict]:
    """mode=replay on the committed Qwen GSM8K replay's first 10 items: exit code,
    stderr, report.json."""
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "n": 10, "outputs": ["json"], "gate": {"wrong_valid_above": gate},
        "replay": str(ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl")})
    err = io.StringIO()
    code = run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp_path, tmp_path, io.StringIO(),
               err)
    return code, err.getvalue(), json.loads((tmp_path / "report.json").read_text())


def test_the_gate_at_and_just_below_a_scored_rate(tmp_path: Path) -> None:
    """The threshold typed as the highest constrained arm's rate (its k of n as a decimal)
    exits 0; the rate of one item fewer (k-1 of n) exits 1 naming that arm."""
    code, _, report = _gsm8k(tmp_path / "plain", None)
    assert code == 0
    gated = {k: a["quadrant"]["valid_wrong"] for k, a in report["arms"].items()
             if k.startswith("constrained[")}
    arm, k = max(gated.items(), key=lambda kv: kv[1])
    n = report["n"]
    assert 0 < k and report["arms"][arm]["wrong_but_valid"]["rate"] == k / n
    code, err, _ = _gsm8k(tmp_path / "at", float(str(k / n)))
    assert code == 0 and "gate tripped" not in err
    code, err, _ = _gsm8k(tmp_path / "below", float(str((k - 1) / n)))
    assert code == 1 and f"gsm8k: {arm} ({pct(k / n)})" in err
    assert err.count("wrong-but-valid above") == 1


def _closing(out_dir: Path, outputs: list[str], tasks: list[str]) -> tuple[str, str]:
    """A run's last stdout line (the recorded replays re-scored), and its notes (stderr)."""
    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "auto", "n": 5, "outputs": outputs})
    out, err = io.StringIO(), io.StringIO()
    loaded = [load_task(TASK_CONF / f"{t}.yaml") for t in tasks]
    assert run(cfg, loaded, out_dir, ROOT, out, err) == 0, err.getvalue()
    assert "re-scoring" not in out.getvalue()  # a note, kept off stdout
    return out.getvalue().strip().splitlines()[-1], err.getvalue()


@pytest.mark.parametrize("tasks", [["gsm8k"], ["gsm8k", "bfcl_simple"]])
def test_the_closing_line_lists_only_the_files_written(tmp_path: Path,
                                                      tasks: list[str]) -> None:
    """outputs=[json,md] writes no page, and the last line does not say it does (answers.csv
    is written whatever outputs says)."""
    last, notes = _closing(tmp_path / "o", ["json", "md"], tasks)
    folders = [tmp_path / "o"] if len(tasks) == 1 else [tmp_path / "o" / t for t in tasks]
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir()) == ["answers.csv", "report.json",
                                                            "report.md"]
    after = "" if len(tasks) == 1 else " (in each task's folder)"
    assert last == (f"Reports written to {tmp_path / 'o'}: report.json, report.md, "
                    f"answers.csv{after}")
    assert notes.count("re-scoring the recorded replay") == len(tasks)  # on stderr
    last, _ = _closing(tmp_path / "all", ["json", "md", "html", "svg", "csv"], tasks[:1])
    assert last == (f"Reports written to {tmp_path / 'all'}: report.json, report.md, "
                    "report.html, quadrants.svg, ledger.csv, answers.csv")


def _mismatched(tmp_path: Path) -> Path:
    """The bundled SmolLM2 GSM8K replay's first three items, its task hash changed."""
    lines = (ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl").read_text(
        encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    head["meta"]["task_hash"] = "0" * 64
    head["meta"]["n"] = 3
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join([json.dumps(head), *lines[1:4]]) + "\n", encoding="utf-8")
    return path


def _score(tmp_path: Path, replay: Path, allow: bool) -> tuple[int, str, str]:
    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["unconstrained", "prompt_json", "constrained",
                                               "reason_then_constrain"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "outputs": ["json", "md"], "replay": str(replay),
        "allow_task_mismatch": allow})
    out, err = io.StringIO(), io.StringIO()
    code = run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp_path / "o", tmp_path, out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_mismatch_scored_anyway_is_said_on_stderr_and_in_both_reports(tmp_path: Path) -> None:
    replay = _mismatched(tmp_path)
    task_hash = load_task(TASK_CONF / "gsm8k.yaml").generation_hash()
    code, out, err = _score(tmp_path, replay, allow=True)
    assert code == 0
    assert err.splitlines() == [
        f"vbw: warning: {replay}: meta.task_hash 000000000000... differs from task gsm8k's "
        f"{task_hash[:12]}... ({TASK_CONF / 'gsm8k.yaml'}); scored anyway, as "
        "allow_task_mismatch=true asks: its texts may come from other prompts, schemas or data"]
    rep = json.loads((tmp_path / "o/report.json").read_text(encoding="utf-8"))
    assert rep["task_mismatch"] == {"replay_task_hash": "0" * 64, "task_hash": task_hash}
    sentence = (f"Task mismatch: the replay's task hash (`000000000000`...) differs from this "
                f"task's (`{task_hash[:12]}`...)")
    assert sentence in (tmp_path / "o/report.md").read_text(encoding="utf-8")
    assert sentence in out


def test_a_matching_replay_reports_no_mismatch_and_a_refused_one_writes_none(
        tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="pass allow_task_mismatch=true"):
        _score(tmp_path, _mismatched(tmp_path), allow=False)
    assert not (tmp_path / "o/report.json").exists()
    lines = (ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl").read_text(
        encoding="utf-8").splitlines()[:4]
    same = tmp_path / "same.jsonl"
    same.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = _score(tmp_path, same, allow=True)
    rep = json.loads((tmp_path / "o/report.json").read_text(encoding="utf-8"))
    assert code == 0 and rep["task_mismatch"] is None and "Task mismatch" not in out
