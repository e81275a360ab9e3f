"""What mode=conformance walks each engine over: schemas with instances known valid or
invalid, and the texts of an instance an arm's prompt asks for. Two sources: the official
JSON-Schema-Test-Suite, Draft 2020-12 (required tests, vendored in vbw/task/suites/, MIT:
NOTICE), the verdicts its own; a task's schemas (per-item ones included) with every item's
gold-shaped answer (vbw.task.goldshape.gold_instance), a minimal instance and mutations
that each break one keyword (vbw.task.mutate), judged by the validator scoring uses.

How it works and why: docs/design.md, section vbw.generate.conformance.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, NamedTuple

from vbw.task.goldshape import gold_instance
from vbw.task.instance import Unbuildable, Unsatisfiable, minimal
from vbw.task.mutate import mutations
from vbw.task.runner import Item, Task
from vbw.task.schema.sources import schema_key
from vbw.task.schema.walk import TooMuchWork
from vbw.task.validity import Validators

SUITES = {"draft2020-12": Path(__file__).resolve().parent / "suites" / "draft2020-12"}
Serialisation = Literal["compact", "spaced"]
GOLD_PER_SCHEMA = 400  # distinct gold-shaped answers kept per schema (GSM8K: one schema)
SHOWN = 200  # characters of an instance's text kept in a finding


class Instance(NamedTuple):
    """One JSON value to walk: `valid` under the case's schema, `keyword` the keyword it
    tests (the suite file's, or the one a mutation breaks), `items` the task items whose
    gold-shaped answer it is (empty for the others)."""

    label: str
    value: Any
    valid: bool
    keyword: str
    items: tuple[str, ...] = ()


class Case(NamedTuple):
    """One schema and its instances; `category`: the suite file (keyword) or the task
    schema's name."""

    id: str
    category: str
    schema: Any
    instances: list[Instance]


def suite_cases(name: str = "draft2020-12") -> list[Case]:
    """Every schema of the vendored suite `name`, in file and case order."""
    out = []
    for path in sorted(SUITES[name].glob("*.json")):
        for i, case in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            out.append(Case(id=f"{path.stem} #{i}: {case['description']}",
                            category=path.stem, schema=case["schema"],
                            instances=[Instance(t["description"], t["data"], bool(t["valid"]),
                                                path.stem) for t in case["tests"]]))
    return out


def task_cases(task: Task, items: list[Item]) -> list[Case]:
    """Per distinct schema of the items (each schema name, per-item ones included): the
    gold-shaped answers of the items that have it, a minimal instance, and mutations of
    the gold-shaped answers (module docstring)."""
    validators = Validators()
    cases: dict[str, tuple[str, str, Any, dict[str, list[str]], dict[str, Any]]] = {}
    for item in items:
        for name, schema in item.schemas.items():
            key = hashlib.blake2b(schema_key(schema).encode(), digest_size=16).hexdigest()
            if key not in cases:
                cases[key] = (f"{name}: schema of item {item.id}", name, schema, {}, {})
            _, _, _, golds, values = cases[key]
            try:
                value = gold_instance(task, item, schema, validators)
            except TooMuchWork:
                value = None
            if value is None:
                continue
            plain = _plain_numbers(value)  # 18, not 18.0: the number as a model writes it
            if json.dumps(plain) != json.dumps(value):
                if validators.is_valid(schema, plain) and task.is_correct(
                        task.json_answer(plain), item):
                    value = plain
            text = json.dumps(value, sort_keys=False, ensure_ascii=False)
            if text in golds or len(golds) < GOLD_PER_SCHEMA:
                golds.setdefault(text, []).append(item.id)
                values[text] = value
    return [Case(cid, name, schema, _instances(schema, golds, values, validators))
            for cid, name, schema, golds, values in cases.values()]


def _plain_numbers(value: Any) -> Any:
    """`value` with every float that is a whole number below 2**53 written as an int."""
    if type(value) is float and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, dict):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(v) for v in value]
    return value


def _instances(schema: Any, golds: dict[str, list[str]], values: dict[str, Any],
               validators: Validators) -> list[Instance]:
    def is_valid(v: Any) -> bool:
        return validators.is_valid(schema, v)

    out = [Instance(f"gold-shaped answer of item {ids[0]}"
                    + (f" (+{len(ids) - 1} more)" if len(ids) > 1 else ""),
                    values[text], True, "gold", tuple(ids)) for text, ids in golds.items()]
    try:
        small = minimal(schema)
        out.append(Instance("minimal instance", small, is_valid(small), "minimal"))
    except (Unbuildable, Unsatisfiable, TooMuchWork):
        pass
    for text in list(golds)[:8]:  # mutations of the first few gold-shaped answers
        for m in mutations(schema, values[text], is_valid):
            out.append(Instance(f"{m.keyword} broken at {m.where} of the gold-shaped answer "
                                f"of item {golds[text][0]}", m.value, False, m.keyword))
    return out


def ordered(value: Any, schema: Any) -> Any:
    """`value` with each object's keys in its schema's `properties` order first (engines
    emit properties in schema order; JSON Schema itself does not order them), the others
    after in their own order; arrays' elements by `items`/`prefixItems`."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: ordered(value[k], props.get(k)) for k in keys}
    if isinstance(value, list):
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        rest = schema.get("items")
        return [ordered(v, prefix[i] if i < len(prefix) else rest) for i, v in enumerate(value)]
    return value


def texts(value: Any, schema: Any) -> dict[Serialisation, str]:
    """The instance's texts an arm prompt asks for: compact (no whitespace) and spaced
    (one space after `,` and `:`, which every engine's flexible whitespace allows); one
    text when both are the same."""
    v = ordered(value, schema)
    compact = json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    spaced = json.dumps(v, ensure_ascii=False, allow_nan=False)
    return {"compact": compact} if spaced == compact else {"compact": compact, "spaced": spaced}
