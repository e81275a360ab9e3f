"""Task files validate once, and a bad one fails with a line naming file, field and value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import TASK_CONF, portable_task
from vbw.errors import ConfigError, DataError
from vbw.task.runner import load_task


def _write(tmp_path: Path, mutate, task: str = "gsm8k") -> Path:
    data = portable_task(task)
    mutate(data)
    p = tmp_path / "t.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _error(tmp_path: Path, mutate, task: str = "gsm8k") -> str:
    with pytest.raises((ConfigError, DataError)) as e:
        load_task(_write(tmp_path, mutate, task)).items(3)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_bundled_tasks_load() -> None:
    for name in ("gsm8k", "bfcl_simple", "bfcl_multiple", "bfcl_parallel",
                 "bfcl_parallel_multiple", "ticket"):
        task = load_task(TASK_CONF / f"{name}.yaml")
        assert task.name == name and len(task.items(3)) == 3


def test_misspelled_key_names_file_field_and_valid_keys(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d.__setitem__("promts", d.pop("prompts")))
    assert "t.yaml" in msg and "promts: unknown key" in msg and "did you mean 'prompts'" in msg


def test_nested_misspelled_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["extract"]["free"][0].__setitem__("grop", 1))
    assert "extract.free.0.regex.grop: unknown key" in msg and "valid: kind, pattern, group" in msg


def test_unknown_kind_lists_valid_ones(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d.__setitem__("check", {"kind": "fuzzy"}))
    assert "check" in msg and "'fuzzy'" in msg
    assert "valid: numeric, exact, string, regex, membership, call_args" in msg  # plugins' too


def test_bad_regex_names_value(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["extract"]["free"][0].__setitem__("pattern", "(["))
    assert "extract.free.0.regex.pattern" in msg and "not a valid regex" in msg


def test_bad_jmespath_is_one_line_naming_field_and_value(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["dataset"]["fields"].__setitem__("q", "a[[["))
    assert "t.yaml: dataset.fields.q:" in msg and "not a valid JMESPath expression" in msg
    assert "at column 2" in msg and "(got 'a[[[')" in msg


def _membership(string: object) -> Callable[[dict], None]:
    return lambda d: d.__setitem__("check", {"kind": "membership", "string": string})


@pytest.mark.parametrize("string, got", [(["strip", "lower"], "['strip', 'lower']"),
                                         ("lower", "'lower'")])
def test_membership_normaliser_shows_the_expected_form(tmp_path: Path, string: object,
                                                       got: str) -> None:
    msg = _error(tmp_path, _membership(string))
    assert msg == (f"{tmp_path / 't.yaml'}: check.membership.string: expected a string "
                   f'normaliser like {{normalize: [strip, lower], delete_chars: ""}} (got {got})')


def test_membership_normaliser_kind_is_optional(tmp_path: Path) -> None:
    task = load_task(_write(tmp_path, _membership({"normalize": ["strip", "lower"]})))
    check = task.spec.check
    assert check.check(" Paris", ["paris", "lyon"]) and not check.check("Rome", ["paris"])
    msg = _error(tmp_path, _membership({"normalise": ["lower"]}))
    assert "check.membership.string.normalise: unknown key; did you mean 'normalize'?" in msg


def _per_item_path(path: str) -> Callable[[dict], None]:
    return lambda d: d["schemas"]["arguments"].__setitem__("path", path)


def test_per_item_schema_path_giving_nothing(tmp_path: Path) -> None:
    msg = _error(tmp_path, _per_item_path("function.parametres"), "bfcl_simple")
    assert msg == (f"{tmp_path / 't.yaml'}: schemas.arguments: item simple_0: path "
                   "'function.parametres' gave nothing; the item's fields are: question, "
                   "function, name")


def test_per_item_schema_path_giving_a_non_object(tmp_path: Path) -> None:
    msg = _error(tmp_path, _per_item_path("function.name"), "bfcl_simple")
    assert msg.startswith(f"{tmp_path / 't.yaml'}: schemas.arguments: item simple_0: ")
    assert ("path 'function.name' gave str 'calculate_triangle_area', not an object; "
            "the item's fields are: question, function, name") in msg


def test_answer_schema_must_exist(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d.__setitem__("answer_schema", "nope"))
    assert "answer_schema 'nope'" in msg and "answer, reasoning" in msg


def test_bad_template(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["prompts"].__setitem__("free", "{{ question "))
    assert "prompts.free" in msg and "template syntax error" in msg


def test_missing_dataset_file(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["dataset"].__setitem__("path", "nowhere.jsonl"))
    assert "dataset file not found" in msg and "nowhere.jsonl" in msg


def test_missing_field_names_row(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["dataset"]["fields"].__setitem__("q", "nosuchkey"))
    assert "dataset.fields.q: 'nosuchkey' finds nothing in row 0" in msg  # test_itemset.py


def test_invalid_yaml(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:\d+: invalid YAML"):
        load_task(p)


def test_json_dataset_and_first(tmp_path: Path) -> None:
    rows = [{"q": "one", "a": "1", "k": "x"}, {"q": "two", "a": "2", "k": "y"}]
    (tmp_path / "d.json").write_text(__import__("json").dumps(rows))
    spec = {
        "name": "tiny", "dataset": {"path": "d.json", "id": {"kind": "path", "path": "k"},
                                    "fields": {"q": "q"},
                                    "gold": {"path": "a", "coerce": {"kind": "number"}},
                                    "first": 1},
        "prompts": {"free": "{{ q }}", "json": "{{ q }} {{ schema | json }}"},
        "schemas": {"s": {"kind": "static", "schema": {"type": "object"}}},
        "answer_schema": "s", "extract": {"free": [{"kind": "last_number"}]},
        "coerce": {"kind": "number"}, "check": {"kind": "numeric"}}
    p = tmp_path / "tiny.yaml"
    p.write_text(yaml.safe_dump(spec))
    items = load_task(p).items()
    assert [(i.id, i.gold) for i in items] == [("x", 1.0)]


def test_registries_are_the_union_vocabularies() -> None:
    """The documented registries list exactly the kinds the validators accept."""
    import typing

    from vbw.task import CHECKER_KINDS, COERCION_KINDS, SCHEMA_KINDS, STEP_KINDS
    from vbw.task.check import Checker
    from vbw.task.coerce import Coercion
    from vbw.task.extract import FreeStep
    from vbw.task.schema.sources import SchemaSource

    for union, registry in ((Checker, CHECKER_KINDS), (Coercion, COERCION_KINDS),
                            (FreeStep, STEP_KINDS), (SchemaSource, SCHEMA_KINDS)):
        members = typing.get_args(typing.get_args(union)[0])
        assert {m: None for m in members}.keys() == {v: None for v in registry.values()}.keys()
        for kind, cls in registry.items():
            assert typing.get_args(cls.model_fields["kind"].annotation) == (kind,)


def test_exclude_leaves_rows_out_before_first_and_keeps_the_hash_when_empty(
        tmp_path: Path) -> None:
    plain = load_task(TASK_CONF / "bfcl_simple.yaml")
    empty = load_task(_write(tmp_path, lambda d: d["dataset"].__setitem__("exclude", []),
                             "bfcl_simple"))
    assert empty.generation_hash() == plain.generation_hash()  # committed replays stay valid

    def leave_out(d: dict) -> None:
        d["dataset"].update(exclude=["simple_1"], first=3)

    task = load_task(_write(tmp_path, leave_out, "bfcl_simple"))
    assert task.ids() == ["simple_0", "simple_2", "simple_3"]
    assert [it.id for it in task.items()] == task.ids()
    assert task.item(1, "simple_2").fields == plain.item(2, "simple_2").fields
    assert task.generation_hash() != plain.generation_hash()


def test_exclude_names_an_id_no_row_has(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["dataset"].__setitem__("exclude", ["simple_x"]),
                 "bfcl_simple")
    assert msg.endswith("dataset.exclude: no row has id 'simple_x'")


def test_exclude_needs_ids_read_from_the_row(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda d: d["dataset"].__setitem__("exclude", ["gsm8k_test_1"]))
    assert "exclude needs id of kind path" in msg
