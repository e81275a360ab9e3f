"""The validation boundary: YAML/dict -> pydantic model, with one-line errors that name the
file, the field path and the offending value (and, for a misspelled key, the valid ones)."""

from __future__ import annotations

import difflib
import re
import reprlib
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from vbw.errors import ConfigError
from vbw.yamlsyntax import explain

if TYPE_CHECKING:  # pydantic is imported where a model is validated, not by load_yaml's
    from pydantic import BaseModel, ValidationError  # callers (vbw.cli.hydra_internals)

M = TypeVar("M", bound="BaseModel")


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names one key twice; `line` and `first` are 1-based."""

    def __init__(self, key: Any, line: int, first: int, node: yaml.Node) -> None:
        super().__init__(None, None, f"duplicate key {key!r} (first at line {first})",
                         node.start_mark)
        self.key, self.line, self.first = key, line, first


MAX_NODES = 100_000  # a YAML document's size with every alias expanded; a task is ~1,000
MAX_DEPTH = 200      # nesting levels; a task needs about 10


class UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping, where PyYAML would
    silently keep the last: in a task file that hides a whole block (two `check:`s).
    Keys merged in by `<<` may still be overridden; that is what merge keys are for.

    It also refuses a document that aliases expand beyond MAX_NODES nodes (a "billion
    laughs" bomb is tiny on disk and endless to validate, hash or print) or that nests
    deeper than MAX_DEPTH, and it reads `1e-6` as a float, as Hydra's loader does, so a
    task means the same read either way."""

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_size(node)
        return node

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.MarkedYAMLError(problem=f"nested deeper than {MAX_DEPTH} levels",
                                           problem_mark=mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # unhashable: SafeConstructor reports it below
            line = key_node.start_mark.line + 1
            if key in first:
                raise DuplicateKeyError(key, line, first[key], key_node)
            first[key] = line
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def _check_size(root: yaml.Node) -> None:
    """Expanded node count, each distinct node sized once (aliases share node objects)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        sizes[id(node)] = 1 + sum(sizes.get(id(c), 0) for c in children)
        if sizes[id(node)] > MAX_NODES:
            raise yaml.MarkedYAMLError(
                problem=f"aliases expand it beyond {MAX_NODES:,} nodes (an alias bomb?)",
                problem_mark=node.start_mark)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def load_yaml(path: Path) -> Any:
    """Parse a YAML file with UniqueKeyLoader; errors are one line naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except DuplicateKeyError as e:
        raise ConfigError(f"{path}:{e.line}: duplicate key {e.key!r} (first at line "
                          f"{e.first})") from None
    except yaml.YAMLError as e:
        line, why = explain(e, text)
        where = f":{line}" if line is not None else ""
        raise ConfigError(f"{path}{where}: invalid YAML: {why}") from None


def check_duplicate_keys(path: Path) -> None:
    """Raise ConfigError if a YAML file (e.g. a Hydra config) repeats a key in a mapping."""
    load_yaml(path)


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate `data` as `model`; on failure raise ConfigError naming source, field, value."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ConfigError(describe(e, model, data), source=source) from None


PLACED = "vbw_placed"  # a validator's message that names the faulty part of its value


def placed(message: str) -> Exception:
    """The error a validator raises when its message already names the part of the value
    at fault (`properties.answer.type: unknown type 'nubmer'`): `describe` then shows no
    `(got ...)` dump of the whole value (a schema, a list)."""
    from pydantic_core import PydanticCustomError

    return PydanticCustomError(PLACED, "{line}", {"line": message})


_OBJECT = frozenset({"model_type", "model_attributes_type", "dataclass_type", "dict_type"})


def describe(e: ValidationError, model: type[BaseModel], data: Any, at: str = "") -> str:
    """The first error as `field: what is wrong (got value)`, in the file's words: the
    field's path from the file's root (`at`: where `data` sits in it, e.g. `meta`), a
    model by its title, never its class name."""
    errors = e.errors(include_url=False)
    # a misspelled key yields "unknown key" and "missing"; the first explains the second
    err = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    field = ".".join(str(p) for p in [at, *loc] if p != "") or "(top level)"
    more = f" (+{e.error_count() - 1} more)" if e.error_count() > 1 else ""
    if err["type"] == "extra_forbidden":
        valid = valid_keys(model, data, loc[:-1])
        hint = ""
        if valid:
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            hint = (f"; did you mean {close[0]!r}?" if close else "") + f" valid: {', '.join(valid)}"
        return f"{field}: unknown key{hint}{more}"
    # pydantic prefixes a validator's own message ("Value error, ..."): the message is ours
    msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if err["type"] == "missing":
        return f"{field}: required key is missing{more}"
    if err["type"] == PLACED:
        return f"{field}: {msg}{more}"
    if err["type"] in _OBJECT:  # pydantic's "... or instance of ArmRecord"
        title = _title(_walk(model, data, loc)[0])
        msg = "should be an object" + (f", the {title}" if title else "")
    value = _short(err.get("input"))
    return f"{field}: {msg} (got {value}){more}"


class _AsWritten(reprlib.Repr):
    """reprlib's bounded repr, but a string is shown as the user wrote it, in quotes: a
    pattern `^\\d+$` is printed so, not with its backslashes doubled by repr. Only control
    characters (a newline would break the one-line error) are escaped."""

    def repr_str(self, x: str, level: int) -> str:
        s = "".join(c if c.isprintable() else repr(c)[1:-1] for c in x[:self.maxstring + 1])
        if len(x) > self.maxstring:
            s = s[:self.maxstring - 3] + "..."
        quote = "'" if "'" not in s or '"' in s else '"'
        return f"{quote}{s}{quote}"


_REPR = _AsWritten()  # keyword arguments need Python 3.12
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 2, 4, 4, 4
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def _short(value: Any) -> str:
    """A value for an error line: bounded before it is built (a huge or deeply nested value
    must not be repr'd whole), then cut to 80 characters."""
    text = _REPR.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def valid_keys(model: Any, data: Any, loc: list[Any]) -> list[str]:
    """The keys valid where `loc` points (following `kind` tags and the tags of
    discriminated unions); [] where no model is known (e.g. a free mapping)."""
    from pydantic import BaseModel

    tp = _walk(model, data, loc)[0]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        # a field excluded from dumps is set by the model itself, never a key in a file
        return [f.alias or n for n, f in tp.model_fields.items() if not f.exclude]
    return []


def _title(tp: Any) -> str | None:
    """A model's own title (`arm record`), None for one without (its class name is not
    a word of the file's)."""
    from pydantic import BaseModel

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.model_config.get("title")
    return None


def _walk(model: Any, data: Any, loc: list[Any]) -> tuple[Any, Any]:
    """The annotation `loc` points at through the model's (following `kind` tags and the
    tags of discriminated unions), and the data there; (None, None) where the walk loses
    its way."""
    from pydantic import BaseModel

    tp: Any = model
    tag = "kind"  # a field's union is told apart by this key (its discriminator, if any)
    for part in loc:
        if isinstance(data, dict) and data.get(tag) == part:
            continue  # pydantic puts a discriminated union's tag into the location
        tp = _resolve(tp, data, tag)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = next((f for n, f in tp.model_fields.items() if (f.alias or n) == part), None)
            if field is None:
                return None, None
            tp, data = field.annotation, data.get(part) if isinstance(data, dict) else None
            tag = field.discriminator if isinstance(field.discriminator, str) else "kind"
        else:
            origin, args = typing.get_origin(tp), typing.get_args(tp)
            if origin in (list, dict) and args:
                tp = args[-1]
                data = data[part] if isinstance(data, (list, dict)) and _has(data, part) else None
            else:
                return None, None
    return _resolve(tp, data, tag), data


def _has(container: Any, key: Any) -> bool:
    try:
        container[key]
        return True
    except (KeyError, IndexError, TypeError):
        return False


def _resolve(tp: Any, data: Any, tag: str = "kind") -> Any:
    """Unwrap Annotated/Optional/Union; pick a union member by the data's tag: `kind`, or
    the discriminator an Annotated union names (a registry's union, e.g. a backend's
    `name`)."""
    from pydantic import BaseModel

    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp, *meta = typing.get_args(tp)
            tag = next((m.discriminator for m in meta
                        if isinstance(getattr(m, "discriminator", None), str)), tag)
            continue
        if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            kind = data.get(tag) if isinstance(data, dict) else None
            tagged = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)
                      and kind is not None and m.model_fields.get(tag) is not None
                      and kind in typing.get_args(m.model_fields[tag].annotation)]
            if tagged:
                return tagged[0]
            if len(members) == 1:
                tp = members[0]
                continue
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            return models[0] if len(models) == 1 else tp
        return tp
