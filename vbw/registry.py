"""Open vocabularies, declared once: a registry per vocabulary, filled by a class decorator
and, lazily, by the entry points of installed packages.

The base layer: it imports nothing of vbw but vbw.errors (which imports nothing).

How it works and why: docs/design.md, section vbw.registry.
"""

from __future__ import annotations

import difflib
import threading
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, Field, SerializeAsAny, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from vbw.errors import VbwError, one_line

TAG = "kind"
M = TypeVar("M")


class PluginError(VbwError, ValueError):
    """An installed package's entry point does not load or does not name a model of its
    registry: one line naming the group, the entry point and the value. A usage error
    (exit 2: the installed package is the user's setup, not vbw's bug), and a ValueError
    for what validates a name (a pydantic validator turns it into its own error)."""


class Registry(Generic[M]):
    """The models of one vocabulary (e.g. "checker"), keyed by their `tag` field.

    vbw's own kinds register in the vocabulary's module, before its union is built;
    registering after that is an error rather than a kind the validators would silently
    not know. Plugin kinds arrive through `group`'s entry points (see the module
    docstring) and may arrive at any time.
    """

    def __init__(self, name: str, tag: str = TAG, group: str | None = None,
                 package: str | None = None) -> None:
        self.name = name
        self.tag = tag
        self.group = group
        self.package = package  # its modules register themselves when first imported
        self._classes: dict[str, type[M]] = {}
        self._own: frozenset[str] = frozenset()
        self._union: Any = None
        self._own_loaded = package is None  # its package's modules imported
        self._plugins_loaded = group is None and package is None
        self._lock = threading.Lock()

    def register(self, cls: type[M]) -> type[M]:
        """Class decorator: add `cls` under each value of its `tag: Literal[...]` field.

        Args:
            cls: a model (or plain class) of this vocabulary, declaring its tag.
        Returns:
            `cls` itself, so the decorator leaves the class as it is.
        """
        if self._union is not None:
            raise TypeError(f"cannot register {cls.__name__}: the {self.name} union is "
                            "already built (register in the vocabulary's own module, or "
                            f"through an entry point of group {self.group!r})")
        self._add(cls)
        return cls

    def plug(self, cls: type[M]) -> type[M]:
        """Add `cls` from outside vbw, at any time, as an entry point of `group` would: the
        union accepts it by its tag (a test's fake backend registers so, and vbw never
        imports it).

        Args:
            cls: a model (or plain class) of this vocabulary, declaring its tag.
        Returns:
            `cls` itself.
        """
        self._add(cls)
        return cls

    def _add(self, cls: type[M]) -> tuple[str, ...]:
        tags = kind_tags(cls, self.tag)
        for kind in tags:
            if kind in self._classes and self._classes[kind] is not cls:
                raise ValueError(f"{self.name} kind {kind!r} is claimed by both "
                                 f"{self._classes[kind].__name__} and {cls.__name__}")
        for kind in tags:
            self._classes[kind] = cls
        return tags

    def load_own(self) -> None:
        """Import every module of `package` (once; thread-safe): vbw's own kinds register
        on import. Entry points are not read."""
        if self._own_loaded:
            return
        with self._lock:
            if not self._own_loaded:
                assert self.package is not None
                self._import_package(self.package)
                self._own_loaded = True

    def load_plugins(self) -> None:
        """Add vbw's own kinds (`package`), then the models named by the entry points of
        `group` (once; thread-safe)."""
        if self._plugins_loaded:
            return
        self.load_own()
        with self._lock:
            if self._plugins_loaded:
                return
            from importlib.metadata import entry_points

            eps = entry_points(group=self.group) if self.group is not None else ()
            for ep in sorted(eps, key=lambda e: e.name):
                where = f"entry point {ep.name!r} = {ep.value!r} of group {self.group!r}"
                try:
                    cls = ep.load()
                except (Exception, SystemExit) as e:  # a broken plugin: say which, in one
                    raise PluginError(f"{where} (module {ep.module!r}) does not load: "
                                      f"{one_line(e)}") from None  # line; its exit too
                if not isinstance(cls, type):
                    raise PluginError(f"{where} names {cls!r}, not a class")
                try:
                    self._add(cls)
                except (TypeError, ValueError) as e:
                    raise PluginError(f"{where}: {e}") from None
            self._plugins_loaded = True

    @staticmethod
    def _import_package(package: str) -> None:
        """Import every module of `package` (a built-in kind registers on import)."""
        import importlib
        import pkgutil

        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{package}.{info.name}")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The valid kinds: vbw's own in registration order, then the plugins'."""
        self.load_plugins()
        return tuple(self._classes)

    @property
    def classes(self) -> Mapping[str, type[M]]:
        """A read-only view kind -> class (live: it follows later registrations). Reading
        it does not load plugins; `kinds` and `get` do."""
        return MappingProxyType(self._classes)

    def get(self, kind: str) -> type[M]:
        """The class registered for `kind`, loading plugins if vbw's own kinds lack it.

        Args:
            kind: a tag value, e.g. "regex".
        Returns:
            The class; ValueError with a did-you-mean if there is none.
        """
        if kind in self:
            return self._classes[kind]
        raise ValueError(self.unknown(kind))

    def unknown(self, kind: object) -> str:
        """The one line that refuses `kind`: a did-you-mean and every valid kind, the
        installed packages' included.

        Args:
            kind: the tag value no class has.
        Returns:
            The message, one line.
        """
        close = difflib.get_close_matches(str(kind), self.kinds, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ";"
        return f"unknown {self.name} kind {kind!r}{hint} valid: {', '.join(self.kinds)}"

    def union(self) -> Any:
        """`Annotated[Union[...], Field(discriminator=tag)]` over vbw's own classes, which
        also accepts a plugin's model for a tag none of them has. It is built once; vbw's own
        vocabulary is closed from then on.

        Returns:
            A runtime type expression for pydantic field annotations (static checkers see Any).
        """
        if self._union is None:
            members = tuple(dict.fromkeys(self._classes.values()))
            if not members:
                raise TypeError(f"the {self.name} registry has no kinds to build a union of")
            self._own = frozenset(self._classes)
            one_of: Any = Union[members]  # type: ignore[valid-type]
            self._union = Annotated[one_of, Field(discriminator=self.tag),
                                    WrapValidator(self._or_plugin), SerializeAsAny()]
        return self._union

    def _or_plugin(self, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Validate with vbw's own union; on a tag none of its members has, with the model
        a plugin registered for it (read from the entry points only then)."""
        if isinstance(value, BaseModel) and type(value) in self._plugin_classes():
            return value
        try:
            return handler(value)
        except ValidationError:
            kind = value.get(self.tag) if isinstance(value, dict) else None
            if not isinstance(kind, str) or kind in self._own or self.group is None:
                raise
            self.load_plugins()
            cls = self._classes.get(kind)
            if cls is None:  # listed with the installed packages' kinds, not vbw's alone
                raise PydanticCustomError("union_tag_invalid", "{line}",
                                          {"line": self.unknown(kind)}) from None
            return cls.model_validate(value)

    def _plugin_classes(self) -> set[type[M]]:
        return {c for k, c in self._classes.items() if k not in self._own}

    def __getitem__(self, kind: str) -> type[M]:
        return self.get(kind)

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self.kinds)

    def __contains__(self, kind: object) -> bool:
        """Whether `kind` is a kind: vbw's own are looked up first (importing `package`
        if there is one); the entry points are read only for a kind none of them is."""
        try:
            if kind in self._classes:
                return True
        except TypeError:  # unhashable
            return False
        if not isinstance(kind, str):
            return False
        if not self._own_loaded:
            self.load_own()
            if kind in self._classes:
                return True
        self.load_plugins()
        return kind in self._classes

    def __repr__(self) -> str:
        return f"Registry({self.name!r}, kinds={tuple(self._classes)})"


def kind_tags(cls: type, tag: str = TAG) -> tuple[str, ...]:
    """The string values of a model's required `tag: Literal[...]` field; for a class that
    is no pydantic model (an engine), its class attribute `tag`, a string."""
    if isinstance(cls, type) and not issubclass(cls, BaseModel):
        value = cls.__dict__.get(tag)
        if not isinstance(value, str) or not value:
            raise TypeError(f"{cls.__name__} has no class attribute {tag!r} (a string) "
                            "to register by")
        return (value,)
    field = cls.model_fields.get(tag) if isinstance(cls, type) else None
    if field is None:
        raise TypeError(f"{getattr(cls, '__name__', cls)!r} has no {tag!r} field to register by")
    tags = typing.get_args(field.annotation)
    if (typing.get_origin(field.annotation) is not Literal
            or not all(isinstance(t, str) for t in tags)):
        raise TypeError(f"{cls.__name__}.{tag} must be a Literal of strings, "
                        f"not {field.annotation!r}")
    if not field.is_required():
        raise TypeError(f"{cls.__name__}.{tag} must be required (it selects the class)")
    return tags
