"""mode=check and the task audit: every prompt renders, every schema is a JSON Schema, the
checker can say "right"; the same checks stop live and replay runs before they start."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import REPLAYS, TASK_CONF, one_line_error, portable_task, run_vbw
from vbw.task.audit import audit, check_schema
from vbw.task.runner import Task, load_task
from vbw.task.spec import TaskSpec


def _task(tmp_path: Path, mutate, name: str = "gsm8k") -> Path:
    data = portable_task(name)
    mutate(data)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "n"), [("gsm8k", 200), ("bfcl_simple", 200),
                                         ("bfcl_multiple", 200), ("bfcl_parallel", 200),
                                         ("bfcl_parallel_multiple", 198), ("ticket", 60)])
def test_bundled_tasks_pass(name: str, n: int) -> None:
    """No problem, no finding, nothing skipped: on every item a gold-shaped answer (for
    the BFCL v4 tasks a list of calls) is scored right and is valid under the schema."""
    task = load_task(TASK_CONF / f"{name}.yaml")
    result = audit(task, task.items())
    assert result.problems == [] and result.findings == [] and result.not_checked == []
    assert result.items == n and result.gold_checked == n


def test_check_mode_prints_first_item_and_summary(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "mode=check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for heading in ("`free` prompt", "`json` prompt", "`package` prompt", "Schema `answer`",
                    "Gold"):
        assert heading in out
    assert "Janet’s ducks" in out and "18.0" in out  # item gsm8k_test_0 and its gold
    assert "gsm8k: 200 items, 2 distinct schema(s)" in out and "0 problem(s)" in out
    assert not list(tmp_path.rglob("report.json"))  # check mode scores nothing


def test_undefined_variable_names_item_and_variable(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d["prompts"].__setitem__(
        "json", d["prompts"]["json"].replace("{{ question }}", "{{ questoin }}")))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert "t.yaml: prompts.json: item gsm8k_test_0: 'questoin' is undefined" in line
    assert "(+199 more" in line  # every item has the same problem, counted


def test_live_mode_checks_before_loading_a_model(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d["prompts"].__setitem__("free", "{{ questoin }}"))
    proc = run_vbw(f"task.files=[{path}]", "mode=live", "model=smollm2_135m", "n=2",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=60)
    line = one_line_error(proc)
    assert "prompts.free: item gsm8k_test_0: 'questoin' is undefined" in line
    assert not (tmp_path / "o/replay.jsonl").exists()


def test_replay_mode_checks_the_items_it_scores(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d["prompts"].__setitem__(
        "package", "{{ schema | json }} {{ nope }}"))
    replay = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"
    line = one_line_error(run_vbw(f"task.files=[{path}]", f"replay={replay}",
                               f"hydra.run.dir={tmp_path}/o", cwd=tmp_path))
    assert "prompts.package" in line and "'nope' is undefined" in line


def test_invalid_schema_is_a_problem(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d["schemas"]["answer"]["schema"]["properties"][
        "answer"].__setitem__("type", "integerr"))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert "schemas.answer" in line and "unknown type 'integerr'" in line  # test_keywords.py


def test_checker_that_can_never_say_right_is_flagged(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d.__setitem__("coerce", {"kind": "boolean"}))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert "schemas.answer: the gold-shaped answer" in line
    assert "is never scored right (200 items)" in line
    # the evidence: one item, its gold, the built answer, what was extracted, the verdict
    assert ('e.g. item gsm8k_test_0: gold 18.0, built answer {"answer": 18.0}, extracted '
            'null, checker numeric said wrong (valid under the schema)') in line


def test_json_path_the_schema_cannot_hold_is_flagged(tmp_path: Path) -> None:
    path = _task(tmp_path, lambda d: d["extract"].__setitem__("json", {"path": "answr"}))
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert "does not validate on 200 of 200 items" in line and "'answr'" in line
    assert ("e.g. item gsm8k_test_0: gold 18.0, built answer null, extracted null, no value "
            "is valid at extract.json.path 'answr': property 'answr' is forbidden by "
            "additionalProperties: false") in line


def test_some_gold_not_matching_is_a_warning(tmp_path: Path) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    items = task.items(5)
    odd = items[0].model_copy(update={"gold": "not a number"})
    result = audit(task, [odd, *items[1:]])
    assert result.problems == []
    assert any("scored wrong on 1 of 5 items: gsm8k_test_0" in w for w in result.warnings)


def test_gold_that_the_schema_forbids_is_a_warning(tmp_path: Path) -> None:
    """gsm8k golds are numbers; a schema capping them at 20 cannot hold the larger ones."""
    data = portable_task("gsm8k")
    data["schemas"]["answer"]["schema"]["properties"]["answer"]["maximum"] = 20
    task = Task(TaskSpec.model_validate(data), tmp_path / "t.yaml")
    items = task.items(5)
    result = audit(task, items)
    big = [it.id for it in items if it.gold > 20]
    assert result.problems == [] and 0 < len(big) < 5
    assert any(f"does not validate on {len(big)} of 5 items" in w for w in result.warnings)


def test_check_schema() -> None:
    assert check_schema({"type": "object"}) is None
    assert "integerr" in (check_schema({"type": "integerr"}) or "")
    assert "required" in (check_schema({"type": "object", "required": 5}) or "")
    assert "must be an object" in (check_schema([1]) or "")


def test_an_ok_verdict_is_judged_once_per_gold_and_schema(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GSM8K's 200 items have fewer distinct golds: each (schema, gold) is judged once,
    and the audit is the one judging every item gives."""
    from vbw.task import audit as audit_module

    task = load_task(TASK_CONF / "gsm8k.yaml")
    items = task.items()
    calls = []
    real = audit_module.judge

    def counted(*args: object) -> object:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(audit_module, "judge", counted)
    remembered = audit(task, items)
    golds = {(type(i.gold), i.gold) for i in items}
    assert len(calls) == 2 * len(golds) < 2 * len(items)
    monkeypatch.setattr(audit_module, "_SCALARS", ())  # nothing remembered
    assert audit(task, items) == remembered and remembered.gold_checked == len(items)
