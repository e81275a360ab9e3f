"""The runner that interprets a task file: items, prompts per arm, answers and checks.

This is the only place that turns a TaskSpec into behaviour; generation and scoring both
go through it, so a task means the same thing live and in replay.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from jinja2 import TemplateError, UndefinedError

from vbw.errors import ConfigError, DataError, one_line
from vbw.task.arms import Arm
from vbw.task.extract import NOTHING, Extracted
from vbw.task.fields import FieldReader
from vbw.task.dataset import read_data_bytes
from vbw.task.itemset import Item, ItemSet
from vbw.task.jsontext.scan import first_json_object_plain, first_json_span
from vbw.task.jsontext.values import json_text
from vbw.task.bounded import PromptBudget
from vbw.task.prompts import render
from vbw.task.spec import TaskSpec
from vbw.task.tools import resolve
from vbw.validation import load_yaml, validate


class Task(ItemSet):
    """A loaded task file: the validated spec plus where its relative paths point; its
    items (ItemSet), the prompts of each arm, answers and checks, and its identity."""

    def __init__(self, spec: TaskSpec, path: Path) -> None:
        super().__init__(spec, path)
        self._hash: str | None = None  # see generation_hash()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def schema_names(self) -> list[str]:
        return list(self.spec.schemas)

    # -- prompts ---------------------------------------------------------------------
    def messages(self, item: Item, arm: Arm, free_text: str | None = None,
                 rendered: dict[tuple[str, str | None], str] | None = None) -> list[dict]:
        """The chat for one arm. reason_then_constrain needs the unconstrained text.
        `rendered`: this item's prompts by (which, schema), filled in and reused."""
        memo = {} if rendered is None else rendered

        def prompt(which: str, schema: str | None = None) -> str:
            if (which, schema) not in memo:
                memo[which, schema] = self._prompt(which, item, schema)
            return memo[which, schema]

        if arm.kind == "unconstrained":
            return [{"role": "user", "content": prompt("free")}]
        if arm.kind in ("prompt_json", "constrained", "tool_call"):
            # tool_call: the same prompt, so only the way the schema travels differs
            return [{"role": "user", "content": prompt("json", arm.schema)}]
        free = prompt("free")
        package = prompt("package", arm.schema)
        if free_text is None:
            raise ValueError("reason_then_constrain needs the unconstrained arm's text")
        return [{"role": "user", "content": free},
                {"role": "assistant", "content": free_text},
                {"role": "user", "content": package}]

    def tool(self, item: Item, schema: str) -> tuple[str, str]:
        """(name, description) of the function a tool_call[schema] arm offers (the task's
        `tool` section, vbw.task.tools); a path that gives no string names item and path."""
        t = self.spec.tool
        try:
            return (resolve(t.name, item.fields, schema, "name"),
                    resolve(t.description, item.fields, self.spec.label, "description"))
        except ValueError as e:
            raise DataError(f"{self.path}: item {item.id}: {e}") from None

    def prompts(self, item: Item) -> dict[str, str]:
        """Every distinct prompt of the item, each rendered once: `free`, `json[S]` per
        schema (prompt_json and constrained share it), `package` (into the answer schema).
        What mode=check renders; a template error names prompt, item and variable."""
        out = {"free": self._prompt("free", item)}
        for name in item.schemas:
            out[f"json[{name}]"] = self._prompt("json", item, name)
        out["package"] = self._prompt("package", item, self.spec.answer_schema)
        return out

    def _prompt(self, which: str, item: Item, schema: str | None = None) -> str:
        """One prompt of the item: `free` sees the fields; `json` and `package` also see
        `schema`, the item's schema of that name."""
        p = self.spec.prompts
        source = {"free": p.free, "json": p.json_, "package": p.package}[which]
        if source is None:
            raise DataError(f"{self.path}: prompts.package is required for "
                            "reason_then_constrain arms")
        ctx = item.fields if schema is None else {**item.fields, "schema": item.schemas[schema]}
        return self._render(which, source, ctx, item)

    def _render(self, which: str, source: str, ctx: dict[str, Any], item: Item) -> str:
        """Render one prompt; a template error names the prompt, the item and the cause."""
        try:
            return render(source, ctx)
        except UndefinedError as e:
            have = ", ".join(ctx)
            raise ConfigError(f"{self.path}: prompts.{which}: item {item.id}: "
                              f"{one_line(e, typed=False)} (variables: {have})") from None
        except PromptBudget as e:  # stops at once: every other item would take as long
            raise OverBudget(f"{self.path}: prompts.{which}: item {item.id}: {e}") from None
        except (TemplateError, TypeError, ValueError, ArithmeticError, RecursionError) as e:
            raise ConfigError(f"{self.path}: prompts.{which}: item {item.id}: "
                              f"{one_line(e)}") from None

    # -- answers ---------------------------------------------------------------------
    def json_answer(self, obj: dict[str, Any] | None) -> Any:
        """The answer read from a JSON object at the task's path, coerced; None: none."""
        if obj is None:
            return None
        return self.spec.coerce.apply(self.spec.extract.json_.apply(obj))

    def is_correct(self, answer: Any, item: Item) -> bool:
        if answer is None:
            return False
        return self.spec.check.check(answer, item.gold, item.schemas[self.spec.answer_schema])

    def extract(self, text: str | None, item: Item, free: bool,
                spans: bool = False) -> Extracted:
        """The one way an arm's text becomes its answer. `free` (the unconstrained arm): the
        free-text steps in order, the first whose candidate coerces wins; otherwise the
        text's first JSON object, read at the JSON path. `spans`: also where the answer
        (free text, for steps that know it) or the object lies in the text."""
        return Extracted(*self.reader(text, item, free, spans))

    @cached_property
    def reader(self) -> Callable[[str | None, Item, bool, bool], tuple]:
        """`extract` as a plain tuple, the task's steps looked up once: what scoring
        calls for each of its 600,000 arms at 100,000 items of 6 arms."""
        coerce, at_path = self.spec.coerce.apply, self.spec.extract.json_.apply
        steps = self.spec.extract.free

        def read(text: str | None, item: Item, free: bool, spans: bool) -> tuple:
            if text is None:
                return NOTHING
            if not free:
                obj, plain = first_json_object_plain(text)
                if obj is None:
                    return NOTHING
                return obj, plain, coerce(at_path(obj)), first_json_span(text) if spans else None
            fields = item.fields
            for step in steps:
                candidate = step.apply(text, fields)
                if candidate is not None:
                    value = coerce(candidate)
                    if value is not None:
                        span = getattr(step, "span", None) if spans else None
                        return None, None, value, None if span is None else span(text)
            return NOTHING
        return read

    @cached_property
    def fields(self) -> FieldReader:
        """The task's per-field scoring (vbw.task.fields): false when it has no fields."""
        return FieldReader(self.spec)

    # -- identity --------------------------------------------------------------------
    def generation_hash(self) -> str:
        """sha256 of what decides the generated texts: dataset spec and data files' bytes,
        prompts and schemas. Extraction and checking are left out on purpose: fixing an
        extractor and re-scoring an old replay is a legitimate, measurable change. So are
        where the data files live (their bytes are hashed instead) and `first`, which picks
        items without changing any item's text: moving a task folder or scoring more items
        keeps a replay valid. Worked out once per loaded task (a run asks for it to check
        the replay, to merge shards and for report.html's note on prompts)."""
        if self._hash is None:
            self._hash = self._generation_hash()
        return self._hash

    def _generation_hash(self) -> str:
        spec = self.spec.canonical()
        dataset = {k: v for k, v in spec["dataset"].items() if k not in ("path", "first")}
        if not dataset.get("exclude"):  # a task that leaves nothing out hashes as before
            dataset.pop("exclude", None)
        if dataset.get("join") is not None:
            dataset["join"] = {"key": dataset["join"]["key"]}
        part = {k: spec[k] for k in ("name", "prompts", "schemas", "answer_schema")}
        part["dataset"] = dataset
        h = hashlib.sha256(json.dumps(part).encode())
        for f in self.data_files():
            h.update(hashlib.sha256(read_data_bytes(f)).digest())
        return h.hexdigest()

    def prompt_hash(self, item: Item, arms: list[Arm]) -> str:
        """sha256 of every first-turn prompt of the item (the package turn follows from
        them): recorded per item by live generation, checked on resume and on merge."""
        rendered: dict[tuple[str, str | None], str] = {}
        msgs: dict[str, Any] = {a.key: self.messages(item, a, "", rendered) for a in arms}
        for a in arms:  # the offered function is part of a tool_call arm's prompt
            if a.tool:
                msgs[a.key] = {"messages": msgs[a.key], "tool": self.tool(item, a.schema or "")}
        # prompts are strings: orjson spells them as json does unless they are not ASCII
        text = json_text(msgs)
        return hashlib.sha256(json.dumps(msgs).encode() if text is None else text).hexdigest()


class OverBudget(ConfigError):
    """A prompt past its size or time bound (vbw.task.bounded): not one item's problem to
    list beside others, the run stops on it."""


def load_task(path: Path) -> Task:
    """Read and validate a task YAML file; errors name the file, field and value. A
    selection of tasks (`files: [...]`, like conf/task/demo.yaml) is not a task."""
    data = load_yaml(path)
    if isinstance(data, dict) and "files" in data and "name" not in data:
        raise ConfigError(f"{path} is a selection of tasks (files: ...), not a task; list "
                          "its tasks instead")
    spec = validate(TaskSpec, data, source=str(path))
    return Task(spec, path)
