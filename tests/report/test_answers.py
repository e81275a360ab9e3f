"""answers.csv (vbw.score.answers, written by vbw.report.writers): its rows re-derive
report.json's rates exactly, per arm and per parameter group; a hostile answer opens as
text; one process and two write the same bytes; it is written whatever `outputs` says;
its part files are gone after the run."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, TASK_CONF
from vbw import parallel
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.errors import VbwError
from vbw.score.answers import COLUMNS, AnswerParts, json_cell, text
from vbw.score.cells import cell, quoted
from vbw.task.runner import load_task

GSM8K = ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl"
BFCL = ROOT / "replays/bfcl_simple/smollm2_135m/outlines.jsonl"


def _run(tmp: Path, replay: Path, task: str, outputs: list[str] | None = None
         ) -> tuple[Path, str]:
    """Score `replay` as `vbw mode=replay` does; its folder and its stdout."""
    header = json.loads(replay.open(encoding="utf-8").readline())["meta"]
    kinds = sorted({k.split("[")[0] for k in header["arms"]})
    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": kinds,
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "replay": str(replay),
        **({} if outputs is None else {"outputs": outputs})})
    loaded = load_task(TASK_CONF / f"{task}.yaml")
    out = io.StringIO()
    assert run(cfg, [loaded], tmp, tmp, out, io.StringIO()) == 0
    return tmp, out.getvalue()


def _rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "answers.csv", encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


def _parts_left() -> list[str]:
    return [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("vbw-answers-")]


@pytest.mark.parametrize(("task", "replay"), [("gsm8k", GSM8K), ("bfcl_simple", BFCL)])
def test_the_rows_re_derive_report_json(tmp_path: Path, task: str, replay: Path) -> None:
    before = _parts_left()
    folder, stdout = _run(tmp_path, replay, task)
    assert _parts_left() == before  # the part files are removed
    assert stdout.rstrip().endswith("ledger.csv, answers.csv")
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    rows = _rows(folder)
    answer_rows = [r for r in rows if not r["field"]]
    arms = list(report["arms"])
    # task order, arms in arm order
    assert [(r["id"], r["arm"]) for r in answer_rows] == \
        [(led["id"], a) for led in report["ledger"] for a in arms]
    for arm, m in report["arms"].items():
        mine = [r for r in answer_rows if r["arm"] == arm]
        n = len(mine)
        assert n == m["n"] == report["n"]
        right = sum(r["right"] == "1" for r in mine)
        assert m["answer_accuracy"]["rate"] == right / n
        if m["schema_validity"] is None:
            assert {r["valid"] for r in mine} == {""}
            continue
        valid = sum(r["valid"] == "1" for r in mine)
        wbv = sum(r["valid"] == "1" and r["right"] == "0" for r in mine)
        assert m["schema_validity"]["rate"] == valid / n
        assert m["wrong_but_valid"]["rate"] == wbv / n
        # the ledger's state, cell by cell
        states = {led["id"]: led[arm] for led in report["ledger"]}
        assert all(states[r["id"]] == ("valid" if r["valid"] == "1" else "invalid") + "/"
                   + ("right" if r["right"] == "1" else "wrong") for r in mine)
    assert all(r["finish_reason"] in ("stop", "length", "") for r in answer_rows)
    assert all(r["output_tokens"].isdigit() for r in answer_rows)
    if task == "bfcl_simple":
        _groups_re_derive(report, rows)
    else:
        assert len(rows) == len(answer_rows)


def _groups_re_derive(report: dict[str, Any], rows: list[dict[str, str]]) -> None:
    """report.json's per-group `right`: the items whose every parameter of that group is
    right, from the parameter rows."""
    groups: dict[tuple[str, str, str], bool] = {}
    for r in rows:
        if r["field"]:
            assert r["group"] and r["right"] in ("0", "1") and r["gold"]
            key = (r["group"], r["arm"], r["id"])
            groups[key] = groups.get(key, True) and r["right"] == "1"
    fields = {k: v for k, v in report["fields"].items() if k != "all fields"}
    assert fields and {g for g, _, _ in groups} == set(fields)
    for group, f in fields.items():
        for arm, got in f["arms"].items():
            mine = [ok for (g, a, _), ok in groups.items() if g == group and a == arm]
            assert len(mine) == f["n"]
            assert got["right"] == sum(mine)


def test_a_hand_checked_parameter_row(tmp_path: Path) -> None:
    """simple_0 (base 10, height 5, unit optional): constrained[arguments] answered
    {"base": 10, "height": 5}: three parameter rows after its answer's row."""
    rows = _rows(_run(tmp_path, BFCL, "bfcl_simple")[0])
    mine = [r for r in rows if r["id"] == "simple_0" and r["arm"] == "constrained[arguments]"]
    assert [(r["field"], r["group"], r["answer"], r["gold"], r["right"]) for r in mine] == [
        ("", "", '{"base": 10, "height": 5}',
         '{"base": [10], "height": [5], "unit": ["units", ""]}', "1"),
        ("base", "integer", "10", "[10]", "1"), ("height", "integer", "5", "[5]", "1"),
        ("unit", "string", "", '["units", ""]', "1")]
    assert mine[0]["finish_reason"] == "stop" and mine[1]["finish_reason"] == ""


def _hostile(tmp: Path) -> Path:
    """The gsm8k replay with its first items' answers negative numbers, whose JSON text
    starts with '-' (a JSON string starts with a quote: = + @ reach a cell only as text,
    an id, an arm key, a field or a group)."""
    lines = GSM8K.read_text(encoding="utf-8").splitlines(keepends=True)
    for k in range(1, 5):
        rec = json.loads(lines[k])
        for key, arm in rec["arms"].items():
            arm["text"] = "The answer is -2" if key == "unconstrained" else \
                json.dumps({"reasoning": "=1+2", "answer": -5})
        lines[k] = json.dumps(rec) + "\n"
    path = tmp / "hostile.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_hostile_answer_opens_as_text(tmp_path: Path) -> None:
    rows = _rows(_run(tmp_path / "out", _hostile(tmp_path), "gsm8k")[0])
    first = [r for r in rows if r["id"] == rows[0]["id"]]
    assert {r["answer"] for r in first} == {"'-2.0", "'-5"}
    for r in rows:
        assert all(not r[c][:1] in ("=", "+", "-", "@") for c in COLUMNS), r


@pytest.mark.parametrize("value", ["=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)",
                                   "\u3000＝1", "\t=1"])
def test_hostile_text_in_any_cell_is_neutralised(value: str) -> None:
    """ids, arm keys, fields and groups (text cells) go through ledger.csv's own function;
    a JSON text starts with a quote unless it is a number (a negative one is neutralised)."""
    assert text(value).lstrip('"').startswith("'")
    assert text(value) == quoted(cell(value))
    assert json_cell(value).startswith('"""')
    assert json_cell(-3) == "'-3" and json_cell(float("-inf")) == "'-Infinity"
    assert json_cell(None) == ""


def test_one_process_and_two_write_the_same_bytes(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    merged: list[int] = []
    real = AnswerParts.merge

    def merge(self: AnswerParts, theirs: dict[str, Any]) -> None:
        merged.append(len(theirs["parts"]))
        real(self, theirs)

    monkeypatch.setattr(AnswerParts, "merge", merge)
    got = {}
    for n in ("1", "2"):
        monkeypatch.setenv(parallel.ENV, n)
        folder, _ = _run(tmp_path / n, BFCL, "bfcl_simple")
        got[n] = (folder / "answers.csv").read_bytes()
        assert bool(merged) == (n == "2")  # the second process's part was taken in
    assert got["1"] == got["2"]


def test_written_whatever_outputs_says(tmp_path: Path) -> None:
    folder, stdout = _run(tmp_path, GSM8K, "gsm8k", outputs=["json"])
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == \
        ["answers.csv", "report.json"]
    assert stdout.rstrip().endswith(": report.json, answers.csv")


def test_parts_merge_in_position_order_whatever_order_they_came_in() -> None:
    """Two passes' parts, each in its own read order (not task order): the rows come out
    by position; the parts' folders are removed by `close`."""
    a, b = AnswerParts(), AnswerParts()
    for pos in (5, 0, 3):
        a.add(pos, f"row {pos}\n")
    for pos in (4, 1, 2):
        b.add(pos, f"row {pos}\n")
    a.merge(b.state())
    text = "".join(a.rows())
    assert text.splitlines()[1:] == [f"row {i}" for i in range(6)]
    folders = [a.folder, b.folder]
    a.close()
    assert not any(os.path.exists(f) for f in folders)


def test_named_field_rows_follow_their_answer_row() -> None:
    """A task's own fields: one row per field after the arm's row, its value and gold, right
    1/0, empty when n/a (NOT_READ) or absent; valid repeated, the record's columns empty."""
    from types import SimpleNamespace

    from vbw.task.arms import parse_arm
    from vbw.task.fields import ABSENT, NOT_READ, RIGHT, WRONG, FieldRow
    from vbw.score.answers import item_rows

    arms = [parse_arm("unconstrained"), parse_arm("constrained[answer]")]
    item = SimpleNamespace(id="=t1", gold={"category": "billing", "amount": -12.5},
                           field_gold={"category": "billing", "amount": -12.5, "note": None})
    rec = SimpleNamespace(arms={"constrained[answer]": {"finish_reason": "length",
                                                        "n_tokens": 7, "seconds": 0.25}},
                          interventions={"constrained[answer]": [(0, 1), (3, 2)]})
    rows = [FieldRow([NOT_READ, NOT_READ, ABSENT], [None, None, None]),
            FieldRow([RIGHT, WRONG, ABSENT], ["billing", 12.5, None])]
    text_ = item_rows(arms, rec, item, [-1, 1], [False, False], [None, {"x": 1}], rows,
                      ["category", "amount", "note"])
    got = list(csv.reader(io.StringIO(text_)))
    assert all(len(r) == len(COLUMNS) for r in got)
    gold = '{"category": "billing", "amount": -12.5}'
    assert got == [
        ["'=t1", "unconstrained", "", "", "", gold, "", "0", "", "", "", ""],
        ["'=t1", "unconstrained", "category", "", "", '"billing"', "", "", "", "", "", ""],
        ["'=t1", "unconstrained", "amount", "", "", "'-12.5", "", "", "", "", "", ""],
        ["'=t1", "unconstrained", "note", "", "", "", "", "", "", "", "", ""],
        ["'=t1", "constrained[answer]", "", "", '{"x": 1}', gold, "1", "0", "length", "7",
         "0.25", "2"],
        ["'=t1", "constrained[answer]", "category", "", '"billing"', '"billing"', "1", "1",
         "", "", "", ""],
        ["'=t1", "constrained[answer]", "amount", "", "12.5", "'-12.5", "1", "0", "", "", "",
         ""],
        ["'=t1", "constrained[answer]", "note", "", "", "", "1", "", "", "", "", ""]]


def test_no_part_file_is_left_when_the_run_fails_after_scoring(tmp_path: Path) -> None:
    """An item lacking an arm is refused once the pass is done (its rows of the other items
    kept by then): the refusal, and no part folder left behind."""
    lines = GSM8K.read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[150])
    del rec["arms"]["constrained[answer]"]
    lines[150] = json.dumps(rec) + "\n"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(lines), encoding="utf-8")
    before = _parts_left()
    with pytest.raises(VbwError, match="has no arm 'constrained\\[answer\\]'"):
        _run(tmp_path / "out", broken, "gsm8k")
    assert _parts_left() == before
    assert not (tmp_path / "out" / "answers.csv").exists()
