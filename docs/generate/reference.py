"""docs/reference/task.md's field reference, generated from the pydantic models vbw reads
task files with, and the kinds registered in each vocabulary (vbw.task.registry), so the
reference cannot drift from what vbw accepts. docs/generate/blocks.py writes the block
(`task-reference`) and tests/test_readme.py fails when it is stale; the prose around it
(what each vocabulary is for, regex dialects, an example) is hand-written in
docs/reference/task-format.md.

Only vbw's own kinds are listed (an installed plugin's kinds would make the page depend on
the machine that generated it).
"""

from __future__ import annotations

import inspect
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo


def _summary(cls: type) -> str:
    """The first paragraph of the class's own docstring (not an inherited one)."""
    doc = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    return " ".join(doc.split("\n\n")[0].split())


def _type(annotation: Any, kinds: dict[type, str]) -> str:
    """A readable type: a model of a vocabulary reads as its vocabulary's name."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type(args[0], kinds)
    if origin in (Union, UnionType):
        names = list(dict.fromkeys(_type(a, kinds) for a in args))
        return " | ".join(names)
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_type(a, kinds) for a in args)}]"
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type):
        return f"one {kinds[annotation]} kind" if annotation in kinds else annotation.__name__
    return repr(annotation)


def _constraints(info: FieldInfo) -> list[str]:
    words = {"Ge": "at least", "Gt": "more than", "Le": "at most", "Lt": "less than",
             "MinLen": "length at least", "MaxLen": "length at most"}
    out = []
    for m in info.metadata:
        name = type(m).__name__
        if name in words:
            out.append(f"{words[name]} {next(iter(m.__dict__.values()), '') if hasattr(m, '__dict__') else getattr(m, name.lower() if name in ('Ge', 'Gt', 'Le', 'Lt') else ('min_length' if name == 'MinLen' else 'max_length'))}")
        elif getattr(m, "pattern", None):
            out.append(f"pattern `{m.pattern}`")
    return out


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return f"`{info.default_factory()!r}`"
    value = info.default
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_defaults=False)
    return f"`{value!r}`"


def _fields(model: type[BaseModel], kinds: dict[type, str], skip: str | None = None,
            named: dict[str, Any] | None = None) -> list[str]:
    """`named`: a field whose values are names of a registry (mode, outputs, engine.name),
    shown as that registry's kinds."""
    rows = ["| key | type | default | note |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if name == skip:
            continue
        key = info.alias or name
        hints = [info.description or "", *_constraints(info)]
        for m in get_args(info.annotation)[1:] if get_origin(info.annotation) is Annotated else ():
            hints.append(getattr(m, "description", None) or "")
        kind = _type(info.annotation, kinds).replace("|", "\\|")
        reg = (named or {}).get(name)
        if reg is not None:
            own = ", ".join(f"`{k}`" for k, c in sorted(reg.classes.items())
                            if c.__module__.startswith("vbw."))
            kind = kind.replace("str", f"{reg.name} name")
            hints = [f"vbw's: {own}; more from entry point group `{reg.group}`",
                     *(["null: all of vbw's"] if info.default is None else [])]
        note = "; ".join(" ".join(h.split()).rstrip(".") for h in hints if h)
        rows.append(f"| `{key}` | {kind} | {_default(info)} | {note} |")
    return rows


def _section(title: str, model: type[BaseModel], kinds: dict[type, str],
             named: dict[str, Any] | None = None) -> list[str]:
    summary = _summary(model)
    return [f"### {title}", "", *([summary, ""] if summary else []),
            *_fields(model, kinds, named=named), ""]


def _heading(name: str, where: str, group: str | None) -> str:
    return f"{name} ({where}" + (f", entry point group `{group}`" if group else "") + ")"


def _anchor(name: str, where: str, group: str | None) -> str:
    """GitHub's anchor of the vocabulary's heading (as tests/test_docs.py computes it)."""
    return re.sub(r"[^\w\- ]", "", _heading(name, where, group).lower()).replace(" ", "-")


def task_reference() -> str:
    from vbw.task.check import CHECKERS
    from vbw.task.coerce import COERCIONS
    from vbw.task.extract import STEPS, JsonExtract
    from vbw.task.schema.sources import SCHEMA_SOURCES
    from vbw.task.spec import (ID_SOURCES, DatasetSpec, ExtractSpec, FieldSpec, GoldSpec,
                               JoinSpec, PromptsSpec, TaskSpec)
    from vbw.task.tools import ToolSpec

    registries = (("`dataset.id`", ID_SOURCES),
                  ("`extract.free` steps, `dataset.gold.extract`", STEPS),
                  ("`coerce`, `dataset.gold.coerce`", COERCIONS), ("`check`", CHECKERS),
                  ("`schemas.<S>`", SCHEMA_SOURCES))
    kinds = {c: f"[{reg.name}](#{_anchor(reg.name, where, reg.group)})"
             for where, reg in registries for c in reg.classes.values()}
    out = ["## Keys", ""]
    for title, model in (("The task (top level)", TaskSpec), ("`dataset`", DatasetSpec),
                         ("`dataset.join`", JoinSpec), ("`dataset.gold`", GoldSpec),
                         ("`prompts`", PromptsSpec), ("`extract`", ExtractSpec),
                         ("`extract.json`", JsonExtract), ("`fields.<F>`", FieldSpec),
                         ("`tool`", ToolSpec)):
        out += _section(title, model, kinds)
    out += ["## Vocabularies", "",
            "Each is chosen by `kind`; installed packages may add kinds through the entry "
            "point group named (see [plugins.md](plugins.md)).", ""]
    for where, reg in registries:
        own = {k: c for k, c in reg.classes.items() if c.__module__.startswith("vbw.")}
        out += [f"### {_heading(reg.name, where, reg.group)}", "",
                "Kinds: " + ", ".join(f"`{k}`" for k in own) + ".", ""]
        for kind, cls in own.items():
            out += [f"#### `{kind}`", "", _summary(cls), ""]
            rows = _fields(cls, kinds, skip=reg.tag)
            out += (rows if len(rows) > 2 else ["No keys besides `kind`."]) + [""]
    return "\n".join(out).rstrip("\n")


if __name__ == "__main__":
    print(task_reference())


def config_reference() -> str:
    """The run config's keys (vbw.config.RunConfig and the models of its groups), as
    `vbw key=value` overrides name them; the backends are the kinds of vbw.config.BACKENDS."""
    from vbw.config import BACKENDS, EngineConfig, RunConfig
    from vbw.generate.engines import ENGINES
    from vbw.modes import MODES
    from vbw.report.writers import OUTPUTS

    MODES.load_own()
    kinds = {c: "[backend](#backend)" for c in BACKENDS.classes.values()}
    out = ["### Root keys", "", _summary(RunConfig), "",
           *_fields(RunConfig, kinds, named={"mode": MODES, "outputs": OUTPUTS}), ""]
    seen: set[type] = set()
    for name, info in RunConfig.model_fields.items():
        model = get_args(info.annotation)[0] if get_origin(info.annotation) in (Union, UnionType) \
            else info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel) and model not in seen \
                and model not in kinds:
            seen.add(model)
            out += _section(f"`{name}`", model, kinds,
                            named={"name": ENGINES} if model is EngineConfig else None)
            for sub, subinfo in model.model_fields.items():
                if isinstance(subinfo.annotation, type) and issubclass(subinfo.annotation, BaseModel):
                    out += _section(f"`{name}.{subinfo.alias or sub}`", subinfo.annotation, kinds)
    out += ["### `backend`", "", f"Chosen by `name` (entry point group `{BACKENDS.group}`)."
            " Kinds: " + ", ".join(f"`{k}`" for k, c in BACKENDS.classes.items()
                                   if c.__module__.startswith("vbw.")) + ".", ""]
    for tag, cls in BACKENDS.classes.items():
        if cls.__module__.startswith("vbw."):
            rows = _fields(cls, kinds, skip=BACKENDS.tag, named=_registries(cls.named_by))
            out += [f"#### `backend={tag}`", "", _summary(cls), "",
                    *(rows if len(rows) > 2 else ["No keys besides `name`."]), ""]
    return "\n".join(out).rstrip("\n")


def _registries(named_by: dict[str, str]) -> dict[str, Any]:
    """A backend kind's `named_by` ("module:NAME" per field) as the registries themselves."""
    import importlib

    return {field: getattr(importlib.import_module(where.partition(":")[0]),
                           where.partition(":")[2]) for field, where in named_by.items()}


def plugin_groups() -> str:
    """One row per open vocabulary: its entry point group, tag field and vbw's own kinds."""
    from vbw.config import BACKENDS
    from vbw.generate.dialects import DIALECTS
    from vbw.generate.engines.base import ENGINES
    from vbw.modes import MODES
    from vbw.report.writers import OUTPUTS
    from vbw.task.check import CHECKERS
    from vbw.task.coerce import COERCIONS
    from vbw.task.extract import STEPS
    from vbw.task.schema.sources import SCHEMA_SOURCES

    what = {"checker": "`check(answer, gold, schema)`; for `mode=check`, `gold_answers`",
            "extract step": "`apply(text, fields)`: a candidate answer or None",
            "coercion": "`apply(value)`: the answer the checker compares",
            "schema source": "`for_item(fields)`: the item's JSON Schema",
            "backend": "a `BackendSettings` with `provider`, `requires`, `install_hint`, "
                       "`can_constrain`, `tools_refused`",
            "engine": "an `Engine` subclass: `_compile(schema, key)` to a constraint",
            "dialect": "a `Dialect` subclass: what differs from the OpenAI form "
                       "(`schema_fields`, `tool_fields`, `greedy`, "
                       "`logprobs_before_constraint`, `probe`); `backend.dialect=<name>`",
            "mode": "a `Mode` subclass: `run(job) -> int`, and the traits vbw.cli.job checks",
            "output": "an `Output` subclass: `file`, `render(report_set)`; "
                      "selected by `outputs=[...]`"}
    rows = ["| vocabulary | entry point group | tag | a kind provides | vbw's kinds |",
            "|---|---|---|---|---|"]
    MODES.load_own()
    for reg in (CHECKERS, STEPS, COERCIONS, SCHEMA_SOURCES, BACKENDS, ENGINES, DIALECTS, MODES,
                OUTPUTS):
        items = reg.classes.items()  # modes: in import order, which varies, so sorted
        own = ", ".join(f"`{k}`" for k, c in (sorted(items) if reg is MODES else items)
                        if c.__module__.startswith("vbw."))
        rows.append(f"| {reg.name} | `{reg.group}` | `{reg.tag}` | {what[reg.name]} | {own} |")
    return "\n".join(rows)
