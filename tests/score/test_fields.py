"""vbw.score.fields, end to end: a hand-written replay of a task with two fields, scored by
`vbw`, and every per-field figure of report.json re-derived here by an independent tally
(json.loads, ==, abs(): none of vbw's extraction or checking code)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
from pathlib import Path

from tests.conftest import run_vbw
from tests.task.test_fields import fields_task
from tests.task.usertasks import TICKETS, write_replay

ARMS = ["unconstrained", "prompt_json[ticket]", "constrained[ticket]",
        "reason_then_constrain[ticket]"]
OTHER = {"billing": "account", "technical": "billing", "account": "technical"}


def _texts(i: int, category: str, amount: float) -> dict[str, str]:
    """Item i's texts: each arm right or wrong on each field by a rule of i."""
    def obj(cat_right: bool, amount_right: bool) -> str:
        return json.dumps({"category": category if cat_right else OTHER[category],
                           "amount": amount if amount_right else amount + 1})
    return {
        "unconstrained": f"Thinking.\nCategory: {category if i % 3 else OTHER[category]}",
        # prompt_json: invalid (no JSON) on every fourth item
        "prompt_json[ticket]": "sorry" if i % 4 == 3 else obj(i % 2 == 0, True),
        "constrained[ticket]": obj(i % 3 != 0, i % 2 == 0),
        "reason_then_constrain[ticket]": obj(True, i % 5 != 0),
    }


def _tally(texts: dict[str, dict[str, str]]) -> dict[str, dict[str, list[bool]]]:
    """Per field and arm, right per item, worked out from the texts alone."""
    out: dict[str, dict[str, list[bool]]] = {"category": {}, "amount": {}}
    for i, (category, amount, _) in enumerate(TICKETS):
        t = texts[f"t{i}"]
        m = re.findall(r"Category:[ \t]*(\w+)", t["unconstrained"])
        out["category"].setdefault("unconstrained", []).append(bool(m) and m[-1] == category)
        for arm in ARMS[1:]:
            try:
                o = json.loads(t[arm])
            except ValueError:
                o = {}
            out["category"].setdefault(arm, []).append(o.get("category") == category)
            out["amount"].setdefault(arm, []).append(
                "amount" in o and abs(o["amount"] - amount) < 0.01)
    return out


def mcnemar(n10: int, n01: int) -> float:
    d = n10 + n01
    if d == 0:
        return 1.0
    k = min(n10, n01)
    return min(1.0, 2 * sum(math.comb(d, j) for j in range(k + 1)) / 2 ** d)


def _scored(tmp_path: Path, outputs: str) -> tuple[dict[str, dict[str, str]], dict]:
    """The fields task's hand-written replay scored by `vbw` into tmp_path/out: its texts
    and report.json."""
    task = fields_task(tmp_path / "task")
    texts = {f"t{i}": _texts(i, c, a) for i, (c, a, _) in enumerate(TICKETS)}
    replay = write_replay(tmp_path / "r.jsonl", "tickets", ARMS, texts)
    proc = run_vbw(f"task={task}", "mode=replay", f"replay={replay}", f"outputs={outputs}",
                   f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return texts, json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))


def test_per_field_figures_match_an_independent_tally(tmp_path: Path) -> None:
    texts, report = _scored(tmp_path, "[json,md]")
    fields = report["fields"]
    assert list(fields) == ["category", "amount", "all fields"]
    assert report["fields_from"] == "the task's fields"
    want = _tally(texts)
    n = len(TICKETS)
    for name in ("category", "amount"):
        f = fields[name]
        assert f["n"] == n
        assert set(f["arms"]) == set(want[name])
        for arm, right in want[name].items():
            assert f["arms"][arm]["right"] == sum(right), (name, arm)
            assert f["arms"][arm]["accuracy"]["rate"] == sum(right) / n
    # amount has no free-text steps: n/a for the free-text arm, never counted wrong
    assert fields["amount"]["not_read"] == ["unconstrained"]
    assert "unconstrained" not in fields["all fields"]["arms"]
    both = {arm: [a and b for a, b in zip(want["category"][arm], want["amount"][arm])]
            for arm in ARMS[1:]}
    for arm, right in both.items():
        assert fields["all fields"]["arms"][arm]["right"] == sum(right)
    # wrong-but-valid by field: the object is schema-valid (here: it parses) and the field
    # is wrong
    valid = [t["prompt_json[ticket]"] != "sorry" for t in texts.values()]
    wbv = sum(v and not r for v, r in zip(valid, want["category"]["prompt_json[ticket]"]))
    assert fields["category"]["arms"]["prompt_json[ticket]"]["wrong_but_valid"]["rate"] \
        == wbv / n
    # the headline comparison per field: flips and the exact McNemar p
    for name in ("category", "amount", "all fields"):
        src = (want.get(name) or both)["prompt_json[ticket]"]
        dst = (want.get(name) or both)["constrained[ticket]"]
        head = next(c for c in fields[name]["comparisons"] if c["kind"] == "headline")
        assert (head["from"], head["to"]) == ("prompt_json[ticket]", "constrained[ticket]")
        n10 = sum(a and not b for a, b in zip(src, dst))
        n01 = sum(b and not a for a, b in zip(src, dst))
        assert head["flips"] == {"right_to_wrong": n10, "wrong_to_right": n01}
        d = head["deltas"]["accuracy"]
        assert (d["n10"], d["n01"]) == (n10, n01)
        assert math.isclose(d["mcnemar_p"], mcnemar(n10, n01), rel_tol=1e-12)
        assert d["effect"] == (d["mcnemar_p"] < 0.05)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Fields (" in md
    line = next(x for x in md.splitlines() if x.startswith("| amount |"))
    assert line.split(" | ")[2] == "n/a"  # the unconstrained column


def test_every_field_ci_follows_from_the_documented_recipe(tmp_path: Path) -> None:
    """docs/reference/scoring.md's streams for fields, reimplemented there
    (tests.score.test_bootstrap), on the independent tally above."""
    from tests.score.test_bootstrap import _doc_delta, _doc_rate, _doc_stream

    texts, report = _scored(tmp_path, "[json]")
    seed, r = report["bootstrap"]["seed"], report["bootstrap"]["resamples"]
    want = _tally(texts)
    valid = np.array([t["prompt_json[ticket]"] != "sorry" for t in texts.values()])
    right = {a: np.array(v) for a, v in want["category"].items()}
    rng = _doc_stream(seed, "category: prompt_json[ticket]")
    got = report["fields"]["category"]["arms"]["prompt_json[ticket]"]
    assert got["accuracy"]["ci95"] == _doc_rate(right["prompt_json[ticket]"], rng, r)
    assert got["wrong_but_valid"]["ci95"] == _doc_rate(
        valid & ~right["prompt_json[ticket]"], rng, r)
    rng = _doc_stream(seed, "category: prompt_json[ticket] -> constrained[ticket]")
    head = report["fields"]["category"]["comparisons"][0]
    assert head["deltas"]["accuracy"]["ci95"] == _doc_delta(
        right["prompt_json[ticket]"], right["constrained[ticket]"], rng, r)


# BFCL simple, SmolLM2's constrained[arguments] outputs of the committed outlines replay,
# judged by hand from the gold and the declared types (simplified rules):
BY_HAND = {
    # {"a": 3, "b": -11, "c": -4}: root_type (string, gold ['all'], not optional) left out
    "simple_5": {"integer": True, "string": False},
    # {"radius": 4, "unit": "cm"}: unit allows 'inches' or 'in' only
    "simple_7": {"integer": True, "string": False},
    # function "calculate_area_under_curve" (gold 'x**2', ...) wrong; interval [1, 3]
    # matches [1.0, 3.0] as numbers; method 'trapezoidal' allowed
    "simple_13": {"string": False, "array": True},
    # start_x 0 (gold -2) wrong, end_x 3 right; function and method wrong
    "simple_15": {"integer": False, "string": False},
}


def test_bfcl_simple_reports_parameter_accuracy_by_type_checked_by_hand(
        tmp_path: Path) -> None:
    from tests.conftest import ROOT
    from vbw.task.fields import ABSENT, RIGHT
    from vbw.task.runner import load_task

    replay = ROOT / "replays" / "bfcl_simple" / "smollm2_135m" / "outlines.jsonl"
    proc = run_vbw("task=bfcl_simple", "mode=replay", f"replay={replay}", "outputs=[json]",
                   f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["fields_from"].startswith("the answer's parameters by declared type")
    fields = report["fields"]
    assert {"string", "integer", "all fields"} <= set(fields)
    for f in fields.values():
        assert set(f["arms"]) == set(report["arms"]) and f["not_read"] == []
    # all parameters right, in every arm, is the answer right but for unexpected ones
    for arm, m in report["arms"].items():
        assert fields["all fields"]["arms"][arm]["accuracy"]["rate"] >= \
            m["answer_accuracy"]["rate"]
    task = load_task(ROOT / "conf" / "task" / "bfcl_simple.yaml")
    items = {it.id: it for it in task.items(None)}
    records = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()[1:]]
    texts = {r["id"]: r["arms"]["constrained[arguments]"]["text"] for r in records
             if "id" in r}
    for item_id, want in BY_HAND.items():
        text, item = texts[item_id], items[item_id]
        got = task.extract(text, item, False)
        row = task.fields.row(got.obj, text, got.answer, item, False)
        codes = dict(zip(task.fields.names, row.codes))
        assert {g: c == RIGHT for g, c in codes.items() if c != ABSENT} == want, item_id


def test_mode_compare_pairs_each_field_across_replays(tmp_path: Path) -> None:
    """Two replays of the fields task; B gets every third item's constrained category
    wrong: the category's A-only/B-only counts are those items, by the tally."""
    task = fields_task(tmp_path / "task")
    a = {f"t{i}": _texts(i, c, amt) for i, (c, amt, _) in enumerate(TICKETS)}
    b = {k: dict(v) for k, v in a.items()}
    for i, (c, amt, _) in enumerate(TICKETS):
        if i % 3 == 1:
            b[f"t{i}"]["constrained[ticket]"] = json.dumps({"category": OTHER[c], "amount": amt})
    ra = write_replay(tmp_path / "a.jsonl", "tickets", ARMS, a)
    rb = write_replay(tmp_path / "b.jsonl", "tickets", ARMS, b)
    proc = run_vbw(f"task={task}", "mode=compare", f"replays=[{ra},{rb}]",
                   f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    pair = report["comparisons"][0]["arms"]["constrained[ticket]"]["fields"]
    ta, tb = _tally(a), _tally(b)
    for name in ("category", "amount"):
        x, y = ta[name]["constrained[ticket]"], tb[name]["constrained[ticket]"]
        d = pair[name]["delta"]
        assert (d["n10"], d["n01"]) == (sum(p and not q for p, q in zip(x, y)),
                                        sum(q and not p for p, q in zip(x, y))), name
        assert pair[name]["rate_from"] == sum(x) / len(x)
    assert pair["category"]["delta"]["n10"] > 0 and pair["amount"]["delta"]["n10"] == 0
    # amount has no free-text steps: not compared for the free-text arm
    free = report["comparisons"][0]["arms"]["unconstrained"]["fields"]
    assert "amount" not in free and "category" in free
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| `constrained[ticket]` | category | " in md
