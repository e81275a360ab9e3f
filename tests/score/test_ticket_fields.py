"""The bundled ticket example (conf/task/ticket.yaml, three fields) on its committed
SmolLM2 replays, two engines: report.json's per-field accuracy per arm and the per-field
headline comparison, re-derived by a tally written here from the data and the texts alone
(json's raw_decode from each `{`, Python's `re`, ==): none of vbw's reading or checking."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_vbw
from tests.score.test_fields import mcnemar

DATA = ROOT / "tasks" / "data" / "ticket" / "tickets.jsonl"
ARMS = ["unconstrained", "prompt_json[ticket]", "constrained[ticket]",
        "reason_then_constrain[ticket]"]
FREE = {"category": r"Category:\s*(\w+)",
        "amount": r"Amount:\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)",
        "urgent": r"Urgent:\s*(\w+)"}
BOOL = {"true": True, "yes": True, "false": False, "no": False}


def _first_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _right(field: str, value: object, gold: object) -> bool:
    if value is None:
        return False
    if field == "category":
        return isinstance(value, str) and value.strip().lower() == str(gold).strip().lower()
    if field == "amount":
        if isinstance(value, str):
            try:
                value = float(value.replace(",", ""))
            except ValueError:
                return False
        return (type(value) in (int, float)) and abs(value - gold) < 0.005
    if isinstance(value, str):
        value = BOOL.get(value.strip().lower())
    return type(value) is bool and value is gold


def _tally(replay: Path) -> tuple[list[str], dict[str, dict[str, list[bool]]]]:
    gold = {r["id"]: r for r in map(json.loads, DATA.read_text(encoding="utf-8").splitlines())}
    ids, out = [], {f: {a: [] for a in ARMS} for f in FREE}
    for line in replay.read_text(encoding="utf-8").splitlines()[1:]:
        rec = json.loads(line)
        if "id" not in rec:
            continue  # the end line
        ids.append(rec["id"])
        row = gold[rec["id"]]
        for arm in ARMS:
            text = rec["arms"][arm]["text"] or ""
            for field, pattern in FREE.items():
                if arm == "unconstrained":
                    found = re.findall(pattern, text)
                    value: object = found[-1] if found else None
                else:
                    obj = _first_object(text)
                    value = None if obj is None else obj.get(field)
                out[field][arm].append(_right(field, value, row[field]))
    return ids, out


@pytest.mark.parametrize("engine", ["outlines", "llamacpp"])
def test_ticket_fields_match_an_independent_tally(engine: str, tmp_path: Path) -> None:
    replay = ROOT / "replays" / "ticket" / "smollm2_135m" / f"{engine}.jsonl"
    proc = run_vbw("task=ticket", "model=smollm2_135m", f"engine={engine}", "mode=replay",
                   "outputs=[json,md]", f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert Path(report["source"]).resolve() == replay.resolve()
    ids, want = _tally(replay)
    n = len(ids)
    assert n >= 50 and report["n"] == n and not report["excluded"]["ids"]
    fields = report["fields"]
    assert list(fields) == ["category", "amount", "urgent", "all fields"]
    for field, per_arm in want.items():
        assert fields[field]["n"] == n and fields[field]["not_read"] == []
        for arm, right in per_arm.items():
            got = fields[field]["arms"][arm]
            assert got["right"] == sum(right), (engine, field, arm)
            assert got["accuracy"]["rate"] == sum(right) / n
    every = {a: [all(want[f][a][i] for f in want) for i in range(n)] for a in ARMS}
    for arm, right in every.items():
        assert fields["all fields"]["arms"][arm]["right"] == sum(right), (engine, arm)
    # the one-check answer is the category: the same figure twice, two ways
    for arm in ARMS:
        assert report["arms"][arm]["answer_accuracy"]["rate"] == sum(want["category"][arm]) / n
    for field in [*want, "all fields"]:
        src = (want.get(field) or every)["prompt_json[ticket]"]
        dst = (want.get(field) or every)["constrained[ticket]"]
        head = fields[field]["comparisons"][0]
        assert (head["from"], head["to"], head["kind"]) == (
            "prompt_json[ticket]", "constrained[ticket]", "headline")
        n10 = sum(a and not b for a, b in zip(src, dst))
        n01 = sum(b and not a for a, b in zip(src, dst))
        assert head["flips"] == {"right_to_wrong": n10, "wrong_to_right": n01}
        d = head["deltas"]["accuracy"]
        assert math.isclose(d["delta"], (sum(dst) - sum(src)) / n, abs_tol=1e-12)
        assert math.isclose(d["mcnemar_p"], mcnemar(n10, n01), rel_tol=1e-9)
        assert d["effect"] == (d["mcnemar_p"] < 0.05)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Fields (" in md and "| urgent | " in md
    assert "- amount: `prompt_json[ticket]` → `constrained[ticket]`: " in md


def test_answers_csv_field_rows_re_derive_the_ticket_fields(tmp_path: Path) -> None:
    """answers.csv's field rows (one per item, arm and field) give report.json's per-field
    counts right and wrong-but-valid exactly."""
    import csv

    proc = run_vbw("task=ticket", "model=smollm2_135m", "engine=outlines", "mode=replay",
                   "outputs=[json]", f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    with open(tmp_path / "answers.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["field"]]
    n = report["n"]
    assert len(rows) == n * len(ARMS) * 3
    for field in FREE:
        for arm in ARMS:
            mine = [r for r in rows if r["field"] == field and r["arm"] == arm]
            got = report["fields"][field]["arms"][arm]
            assert sum(r["right"] == "1" for r in mine) == got["right"], (field, arm)
            if got["wrong_but_valid"] is not None:
                wbv = sum(r["valid"] == "1" and r["right"] == "0" for r in mine)
                assert wbv / n == got["wrong_but_valid"]["rate"], (field, arm)
