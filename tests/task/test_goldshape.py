"""The gold-shaped answer is a schema-valid instance, and every check says what it saw.

User tasks of the shapes mode=check used to refuse (an answer schema with other required
properties, GSM8K's `reasoning` schema as the answer schema, a regex checker whose gold is
a pattern) pass it, run through `python -m vbw` as a user would; an unsatisfiable schema is
a problem with its reason; a heuristic finding warns a run instead of refusing it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import REPLAYS, load_json, one_line_error, portable_task, run_vbw
from tests.task.usertasks import TICKET_SCHEMA, regex_task, ticket_task, write_replay
from vbw.task.goldshape import judge, targets
from vbw.task.runner import load_task
from vbw.task.validity import Validators


def _check(task: Path, cwd: Path, *extra: str):
    return run_vbw(f"task.files=[{task}]", "mode=check", *extra, cwd=cwd)


def test_answer_schema_with_other_required_fields_passes_check(tmp_path: Path) -> None:
    proc = _check(ticket_task(tmp_path / "t"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("tickets: 12 items, 1 distinct schema(s), gold-shaped answer checked on 12, "
            "0 problem(s), 0 warning(s), 0 check(s) skipped") in proc.stdout


def test_built_answer_fills_the_other_required_fields(tmp_path: Path) -> None:
    task = load_task(ticket_task(tmp_path))
    item = task.items(1)[0]
    schema = item.schemas["ticket"]
    assert judge(task, item, schema, targets(task)[0], Validators()).outcome == "ok"
    # a gold outside the enum: right by the checker, and the schema rejects it, shown
    odd = item.model_copy(update={"gold": "refund"})
    judged = judge(task, odd, schema, targets(task)[0], Validators())
    assert judged.outcome == "invalid" and judged.example is not None
    assert judged.example.answer == {"category": "refund", "amount": 0}
    assert judged.example.extracted == "refund"
    assert "checker string said right, the schema rejects it" in judged.example.verdict
    assert "'refund' is not one of" in judged.example.verdict


def test_gsm8k_with_the_reasoning_schema_as_answer_schema_passes_check(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["answer_schema"] = "reasoning"
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    proc = _check(path, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "gold-shaped answer checked on 200, 0 problem(s), 0 warning(s)" in proc.stdout


def test_every_schema_is_checked_whatever_answer_schema_names(tmp_path: Path) -> None:
    """A second schema that cannot hold the gold is found though it is not the answer
    schema: its constrained arm could never be right."""
    data = portable_task("gsm8k")
    data["schemas"]["reasoning"]["schema"]["properties"]["answer"] = {"type": "string"}
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    line = one_line_error(_check(path, tmp_path, "n=3"))
    assert "schemas.reasoning: the gold-shaped answer" in line
    assert "does not validate on 3 of 3 items" in line
    assert ('e.g. item gsm8k_test_0: gold 18.0, built answer {"reasoning": "", "answer": '
            '18.0}, extracted 18.0, checker numeric said right, the schema rejects it: at '
            "answer: 18.0 is not of type 'string'") in line


# hand-written texts for the regex task (usertasks.PATTERNS), arm by arm, item by item
RX_ARMS = ["unconstrained", "prompt_json[answer]", "constrained[answer]",
           "reason_then_constrain[answer]"]
RX_TEXTS = {
    "r0": ["Answer: 12345", '{"answer": "1234"}', '{"answer": "54321"}', '{"answer": "00000"}'],
    "r1": ["Answer: ABC-12", '{"answer": "ABC-12"}', '{"answer": "ABC-12"}',
           '{"answer": "abc-12"}'],
    "r2": ["Answer: colour", "The answer is colour", '{"answer": "colr"}',
           '{"answer": "color"}'],
    "r3": ["Answer: cats", '{"answer": "cats"}', '{"answer": "bird"}', '{"answer": "dogs"}'],
    "r4": ["Answer: 3.5", '{"answer": "3.50"}', '{"answer": "3.50"}', '{"answer": "3.50"}'],
    "r5": ["Answer: deadbeef", '{"answer": "DEADBEEF"}', '{"answer": "deadbeef"}',
           '{"answer": "deadbeef"}'],
    "r6": ["Answer: maybe", '{"answer": "no"}', '{"answer": "no"}', '{"answer": "yes"}'],
    "r7": ["Answer: v1.2.3", '{"answer": "v1.2"}', '{"answer": "v1.2.3"}',
           '{"answer": "v10.0.1"}'],
}
# tallied by hand: (valid, right, valid-and-wrong) of 8 per arm
RX_TALLY = {"unconstrained": (None, 6, None), "prompt_json[answer]": (5, 4, 1),
            "constrained[answer]": (8, 6, 2), "reason_then_constrain[answer]": (7, 7, 0)}


def test_regex_checker_task_passes_check_and_scores_a_replay(tmp_path: Path) -> None:
    task = regex_task(tmp_path / "rx")
    proc = _check(task, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("rx: 8 items, 8 distinct schema(s), gold-shaped answer checked on 8, "
            "0 problem(s), 0 warning(s), 0 check(s) skipped") in proc.stdout
    replay = write_replay(tmp_path / "rx.jsonl", "rx", RX_ARMS,
                          {i: dict(zip(RX_ARMS, t)) for i, t in RX_TEXTS.items()})
    run = run_vbw(f"task.files=[{task}]", f"replay={replay}", f"hydra.run.dir={tmp_path}/o",
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr
    rep = load_json(tmp_path / "o/report.json")
    assert rep["n"] == 8
    for arm, (valid, right, wbv) in RX_TALLY.items():
        m = rep["arms"][arm]
        assert m["answer_accuracy"]["rate"] == right / 8, arm
        if valid is None:
            assert m["schema_validity"] is None, arm
        else:
            assert m["schema_validity"]["rate"] == valid / 8, arm
            assert m["wrong_but_valid"]["rate"] == wbv / 8, arm
    assert rep["task_check"] == {"gold_checked": 8, "warnings": [], "findings": [],
                                 "not_checked": []}


def test_unsatisfiable_schema_is_a_check_problem_with_its_reason(tmp_path: Path) -> None:
    """`required` names what additionalProperties: false forbids: no value is valid, so
    every arm on this schema is invalid by construction. A problem: exit 2."""
    schema = json.loads(json.dumps(TICKET_SCHEMA))
    del schema["properties"]["amount"]
    task = ticket_task(tmp_path / "t", schema)
    reason = ("tickets.yaml: schemas.ticket: item t0: unsatisfiable (no JSON value is valid, "
              "so no arm can give a valid answer): required property 'amount' is forbidden by "
              "additionalProperties: false")
    assert reason in one_line_error(_check(task, tmp_path))
    # live mode runs the same checks before it loads a model: refused with the reason
    live = run_vbw(f"task.files=[{task}]", "mode=live", "model=smollm2_135m", "n=1",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert reason in one_line_error(live)
    assert not (tmp_path / "o/replay.jsonl").exists()


def test_contradictory_bounds_are_a_problem_in_a_run_too(tmp_path: Path) -> None:
    schema = json.loads(json.dumps(TICKET_SCHEMA))
    schema["properties"]["amount"].update(minimum=10, maximum=1)
    task = ticket_task(tmp_path / "t", schema)
    line = one_line_error(_check(task, tmp_path))
    assert "required property 'amount': no number within the bounds minimum 10" in line
    replay = write_replay(tmp_path / "r.jsonl", "tickets", ["constrained[ticket]"],
                          {"t0": {"constrained[ticket]": '{"category": "billing"}'}})
    line = one_line_error(run_vbw(f"task.files=[{task}]", f"replay={replay}",
                                  "arms.kinds=[constrained]", "n=1",
                                  f"hydra.run.dir={tmp_path}/o", cwd=tmp_path))
    assert "unsatisfiable" in line and "minimum 10" in line


def test_heuristic_finding_warns_a_replay_run_and_is_reported(tmp_path: Path) -> None:
    """A coercion that can never match the gold fails mode=check, but scoring the replay
    is still possible: the run warns once and records the finding in every report."""
    data = portable_task("gsm8k")
    data["coerce"] = {"kind": "boolean"}
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    one_line_error(_check(path, tmp_path, "n=5"))
    replay = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"
    proc = run_vbw(f"task.files=[{path}]", f"replay={replay}", "n=5",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warnings = [x for x in proc.stderr.splitlines() if x.startswith("vbw: warning:")]
    assert len(warnings) == 2, proc.stderr  # one per schema, each printed once
    for schema, line in zip(("answer", "reasoning"), warnings):
        assert f"schemas.{schema}: the gold-shaped answer" in line
        assert "is never scored right (5 items)" in line
        assert "e.g. item gsm8k_test_0: gold 18.0, built answer {" in line
        assert "extracted null, checker numeric said wrong" in line
    rep = load_json(tmp_path / "o/report.json")
    tc = rep["task_check"]
    assert tc["warnings"] == [w.removeprefix("vbw: warning: ") for w in warnings]
    first = tc["findings"][0]
    assert (first["schema_name"], first["what"], first["failed"], first["checked"]) == \
        ("answer", "wrong", 5, 5)
    assert first["example"] == {"item": "gsm8k_test_0", "gold": 18.0, "answer": {"answer": 18.0},
                                "extracted": None,
                                "verdict": "checker numeric said wrong (valid under the schema)"}
    md = (tmp_path / "o/report.md").read_text(encoding="utf-8")
    assert "## Task check" in md and "is never scored right (5 items)" in md
    html = (tmp_path / "o/report.html").read_text(encoding="utf-8")
    assert 'id="task-check"' in html and "built answer {&#34;answer&#34;: 18.0}" in html


def test_no_answer_built_for_a_regex_gold_is_skipped_and_said(tmp_path: Path) -> None:
    """A gold pattern and a schema pattern no candidate meets both of (here none can): a
    regex's few strings prove nothing, so the check is skipped with the reason and the
    item, not a finding."""
    from vbw.task.audit import audit

    path = regex_task(tmp_path)
    data = tmp_path / "rx.jsonl"
    rows = [json.loads(x) for x in data.read_text(encoding="utf-8").splitlines()]
    rows[2]["schema"]["properties"]["answer"]["pattern"] = "^[0-9]+$"  # gold: colou?r
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    task = load_task(path)
    result = audit(task, task.items())
    assert result.check_problems == [] and result.findings == []
    assert result.gold_checked == 7
    assert len(result.not_checked) == 1
    assert ("schemas.answer: no gold-shaped answer built on 1 item(s), e.g. item r2: no answer "
            'built is both right by check regex and valid, e.g. item r2: gold "colou?r", built '
            'answer {"answer": "color"}, extracted "color", checker regex said right, the '
            "schema rejects it: at answer: 'color' does not match '^[0-9]+$'") \
        in result.not_checked[0]


def test_membership_tries_each_member(tmp_path: Path) -> None:
    """The first member, "refund", is invalid under the enum; "billing" is valid and
    right: the check passes on it."""
    path = ticket_task(tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["dataset"]["gold"] = {"path": "['refund', category]"}
    data["check"] = {"kind": "membership"}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    task = load_task(path)
    item = task.items(1)[0]
    assert item.gold == ["refund", "billing"]
    judged = judge(task, item, item.schemas["ticket"], targets(task)[0], Validators())
    assert judged.outcome == "ok"
