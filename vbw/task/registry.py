"""Closed vocabularies, declared once: a registry per vocabulary, filled by a class decorator.

A task file picks each extractor step, coercion, checker and schema source by its `kind`.
Each class declares its own tag (`kind: Literal["regex"]`) and registers itself; the
registry then derives everything else from that one declaration: the tuple of valid kinds,
the lookup with a did-you-mean, and the pydantic discriminated union a task model uses as
a field type. Adding a kind therefore touches exactly one module.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, Field

TAG = "kind"
M = TypeVar("M", bound=BaseModel)


class Registry(Generic[M]):
    """The classes of one vocabulary (e.g. "extract step"), keyed by their `kind` tag.

    The union is built once, at the end of the vocabulary's module; registering after that
    is an error rather than a kind the validators would silently not know.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._classes: dict[str, type[M]] = {}
        self._union: Any = None

    def register(self, cls: type[M]) -> type[M]:
        """Class decorator: add `cls` under each value of its `kind: Literal[...]` tag."""
        if self._union is not None:
            raise TypeError(f"cannot register {cls.__name__}: the {self.name} union is "
                            "already built (register in the vocabulary's own module)")
        tags = kind_tags(cls)
        for kind in tags:
            if kind in self._classes:
                raise ValueError(f"{self.name} kind {kind!r} is claimed by both "
                                 f"{self._classes[kind].__name__} and {cls.__name__}")
        for kind in tags:
            self._classes[kind] = cls
        return cls

    @property
    def kinds(self) -> tuple[str, ...]:
        """The valid kinds, in registration order."""
        return tuple(self._classes)

    @property
    def classes(self) -> Mapping[str, type[M]]:
        """A read-only view kind -> class (live: it follows later registrations)."""
        return MappingProxyType(self._classes)

    def get(self, kind: str) -> type[M]:
        """The class registered for `kind`; ValueError with a did-you-mean if there is none."""
        try:
            return self._classes[kind]
        except (KeyError, TypeError):
            pass
        close = difflib.get_close_matches(str(kind), self.kinds, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ";"
        raise ValueError(f"unknown {self.name} kind {kind!r}{hint} valid: "
                         f"{', '.join(self.kinds)}")

    def union(self) -> Any:
        """`Annotated[Union[...], Field(discriminator="kind")]` over the registered classes.

        The result is a runtime type expression for pydantic field annotations (static
        checkers see Any)."""
        if self._union is None:
            members = tuple(dict.fromkeys(self._classes.values()))
            if not members:
                raise TypeError(f"the {self.name} registry has no kinds to build a union of")
            one_of: Any = Union[members]  # type: ignore[valid-type]
            self._union = Annotated[one_of, Field(discriminator=TAG)]
        return self._union

    def __contains__(self, kind: object) -> bool:
        return kind in self._classes

    def __repr__(self) -> str:
        return f"Registry({self.name!r}, kinds={self.kinds})"


def kind_tags(cls: type[BaseModel]) -> tuple[str, ...]:
    """The string values of a model's required `kind: Literal[...]` field."""
    field = cls.model_fields.get(TAG) if isinstance(cls, type) else None
    if field is None:
        raise TypeError(f"{getattr(cls, '__name__', cls)!r} has no {TAG!r} field to register by")
    tags = typing.get_args(field.annotation)
    if (typing.get_origin(field.annotation) is not Literal
            or not all(isinstance(t, str) for t in tags)):
        raise TypeError(f"{cls.__name__}.{TAG} must be a Literal of strings, "
                        f"not {field.annotation!r}")
    if not field.is_required():
        raise TypeError(f"{cls.__name__}.{TAG} must be required (it selects the class)")
    return tags
