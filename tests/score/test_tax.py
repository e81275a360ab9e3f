"""The grammar's tax at scoring (vbw.score.tax, vbw.report.tax): a committed replay given
tax values by a rule, scored by `vbw`, and report.json's figures re-derived here from the
values and report.json's own ledger; a replay without a tax reports as it always has."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from tests.conftest import ROOT, run_vbw

REPLAY = ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl"
ENFORCED = ("constrained[answer]", "constrained[reasoning]", "reason_then_constrain[answer]")
OUTCOME = {"valid/right": "right", "valid/wrong": "wrong_but_valid",
           "invalid/right": "invalid", "invalid/wrong": "invalid"}


def _tax(i: int, arm: str) -> float | None:
    """Item i's tax on an arm, by a rule: absent on every seventh item of one arm, zero on
    every fifth item, else a value of i."""
    if arm == "constrained[reasoning]" and i % 7 == 3:
        return None
    return 0.0 if i % 5 == 0 else round((i * 0.37) % 5 + 0.001 * len(arm), 6)


def _with_tax(tmp_path: Path, n: int) -> Path:
    lines = REPLAY.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for i, line in enumerate(lines[1:n + 1]):
        rec = json.loads(line)
        for arm in ENFORCED:
            if (t := _tax(i, arm)) is not None:
                rec["arms"][arm]["tax"] = t
        out.append(json.dumps(rec))
    path = tmp_path / "taxed.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _figures(values: list[float]) -> dict:
    if not values:
        return {"items": 0, "mean": None, "median": None, "zero": 0}
    return {"items": len(values), "mean": round(statistics.fmean(values), 6),
            "median": round(statistics.median(values), 6),
            "zero": sum(v == 0.0 for v in values)}


def test_tax_figures_match_an_independent_tally(tmp_path: Path) -> None:
    n = 40
    replay = _with_tax(tmp_path, n)
    proc = run_vbw("task=gsm8k", f"replay={replay}", f"n={n}", "outputs=[json,md,html]",
                   f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out/report.json").read_text(encoding="utf-8"))
    ledger = {row["id"]: row for row in report["ledger"]}
    ids = [json.loads(x)["id"] for x in replay.read_text().splitlines()[1:]]
    assert set(report["tax"]) == set(ENFORCED)  # never an arm without a grammar
    for arm in ENFORCED:
        values = {i: _tax(k, arm) for k, i in enumerate(ids)}
        got = [v for v in values.values() if v is not None]
        want = {"not_recorded": sum(v is None for v in values.values()), "all": _figures(got),
                "by_outcome": {o: _figures([v for i, v in values.items() if v is not None
                                            and OUTCOME[ledger[i][arm]] == o])
                               for o in ("right", "wrong_but_valid", "invalid")}}
        assert report["tax"][arm] == want, arm
    md = (tmp_path / "out/report.md").read_text(encoding="utf-8")
    assert "## The grammar's tax" in md and "| `constrained[answer]` |" in md
    assert "Items without a recorded tax: `constrained[reasoning]` (6)." in md
    assert '<section id="tax">' in (tmp_path / "out/report.html").read_text(encoding="utf-8")


def test_a_replay_without_tax_reports_as_before(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", f"replay={REPLAY}", "n=10", "outputs=[json,md,html]",
                   f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '"tax"' not in (tmp_path / "report.json").read_text(encoding="utf-8")
    assert "grammar's tax" not in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert 'id="tax"' not in (tmp_path / "report.html").read_text(encoding="utf-8")
