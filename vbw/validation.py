"""The validation boundary: YAML/dict -> pydantic model, with one-line errors that name the
file, the field path and the offending value (and, for a misspelled key, the valid ones)."""

from __future__ import annotations

import difflib
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from vbw.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def load_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{path}{where}: invalid YAML: {problem}") from None


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate `data` as `model`; on failure raise ConfigError naming source, field, value."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ConfigError(describe(e, model, data), source=source) from None


def describe(e: ValidationError, model: type[BaseModel], data: Any) -> str:
    errors = e.errors(include_url=False)
    # a misspelled key yields "unknown key" and "missing"; the first explains the second
    err = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    field = ".".join(str(p) for p in loc) or "(top level)"
    more = f" (+{e.error_count() - 1} more)" if e.error_count() > 1 else ""
    if err["type"] == "extra_forbidden":
        valid = _valid_keys(model, data, loc[:-1])
        hint = ""
        if valid:
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = (f"; did you mean {close[0]!r}?" if close else "") + f" valid: {', '.join(valid)}"
        return f"{field}: unknown key{hint}{more}"
    msg = err["msg"]
    if err["type"] == "missing":
        return f"{field}: required key is missing{more}"
    value = _short(err.get("input"))
    return f"{field}: {msg} (got {value}){more}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _valid_keys(model: Any, data: Any, loc: list[Any]) -> list[str]:
    """Walk `loc` through the model's annotations (following `kind` tags) to its keys."""
    tp: Any = model
    for part in loc:
        if isinstance(data, dict) and data.get("kind") == part:
            continue  # pydantic puts a discriminated union's tag into the location
        tp = _resolve(tp, data)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = next((f for n, f in tp.model_fields.items() if (f.alias or n) == part), None)
            if field is None:
                return []
            tp, data = field.annotation, data.get(part) if isinstance(data, dict) else None
        else:
            origin, args = typing.get_origin(tp), typing.get_args(tp)
            if origin in (list, dict) and args:
                tp = args[-1]
                data = data[part] if isinstance(data, (list, dict)) and _has(data, part) else None
            else:
                return []
    tp = _resolve(tp, data)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        # a field excluded from dumps is set by the model itself, never a key in a file
        return [f.alias or n for n, f in tp.model_fields.items() if not f.exclude]
    return []


def _has(container: Any, key: Any) -> bool:
    try:
        container[key]
        return True
    except (KeyError, IndexError, TypeError):
        return False


def _resolve(tp: Any, data: Any) -> Any:
    """Unwrap Annotated/Optional/Union; pick a union member by the data's `kind` tag."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
            continue
        if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            kind = data.get("kind") if isinstance(data, dict) else None
            tagged = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)
                      and kind is not None and m.model_fields.get("kind") is not None
                      and kind in typing.get_args(m.model_fields["kind"].annotation)]
            if tagged:
                return tagged[0]
            if len(members) == 1:
                tp = members[0]
                continue
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            return models[0] if len(models) == 1 else tp
        return tp
