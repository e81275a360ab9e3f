"""Docstrings say what a thing is for, not when or how fast: every module under vbw/ has a
module docstring of at most MAX_LINES lines; no docstring quotes history or measured figures
(those go to docs/design.md, docs/performance.md or commit messages); and the plugin API
(PLUGIN_API, TASK_KINDS: what docs/reference/plugins.md documents) says in `Args:` and
`Returns:` what each of its methods takes and gives."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

MAX_LINES = 10


# What a docstring must not say, each with a planted sentence it catches (tested below).
HISTORY = (
    (r"\bissues?\s*#?\d+", "the report shows them since issue 19, item 5"),
    (r"\b(used to|as before|as it always (did|raised)|previously|formerly)\b",
     "this used to be written by three functions"),
    (r"\b20\d\d-\d\d-\d\d\b", "benchmarked on 2026-03-01"),
    (r"\bmeasured\b", "measured on the 4x25k merge"),
    (r"\b\d[\d,]*(\.\d+)?\s*(ms|s|MB|GB)\b", "3,000 calls took 42 s for one item"),
    (r"\b\d+(\.\d+)?x\s+(faster|slower)\b", "a compiled validator, about 4x faster here"),
    (r"->\s*\d[\d.,]*\s*(ms|s|MB|GB)\b", "merge: 18.0 s -> 17.3 s"),
    (r"\btook (over |about |~)?\d", "a pattern took over 60 s to score"),
)

# The plugin API: the classes docs/reference/plugins.md tells a plugin to subclass or use,
# "module:Class". Their public methods (and the hooks named in HOOKS) document Args/Returns.
PLUGIN_API = (
    "vbw.registry:Registry",
    "vbw.config:BackendSettings",
    "vbw.generate.providers:Provider",
    "vbw.generate.backend:Backend",
    "vbw.generate.engines.base:Engine",
    "vbw.generate.engines.base:Constraint",
    "vbw.generate.dialects.base:Dialect",
    "vbw.modes:Mode",
    "vbw.report.writers:Output",
    "vbw.task.kinds:BaseChecker",
    "vbw.task.kinds:BaseStep",
    "vbw.task.kinds:BaseCoercion",
    "vbw.task.kinds:BaseSchemaSource",
)
HOOKS = {"Engine": ("_compile",)}  # private by name, but what an engine kind overrides
# The task-side vocabularies ("registry module:NAME", its contract's base, the methods the
# plugins.md table names): vbw's own kinds subclass the base, whose docstrings hold the
# Args/Returns; an override says in its own docstring (or its class's) what it does.
TASK_KINDS = (
    ("vbw.task.check:CHECKERS", "vbw.task.kinds:BaseChecker", ("check", "gold_answers")),
    ("vbw.task.extract:STEPS", "vbw.task.kinds:BaseStep", ("apply",)),
    ("vbw.task.coerce:COERCIONS", "vbw.task.kinds:BaseCoercion", ("apply",)),
    ("vbw.task.schema.sources:SCHEMA_SOURCES", "vbw.task.kinds:BaseSchemaSource",
     ("for_item",)),
)


def _modules() -> list[Path]:
    return sorted((ROOT / "vbw").rglob("*.py"))


def _docstrings(source: str) -> list[tuple[str, str]]:
    """(where, docstring) of the module and every class and function in `source`."""
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                out.append((getattr(node, "name", "<module>") + f":{getattr(node, 'lineno', 1)}",
                            doc))
    return out


def history_in(source: str) -> list[str]:
    """Every docstring sentence in `source` that a HISTORY pattern matches."""
    found = []
    for where, doc in _docstrings(source):
        flat = " ".join(doc.split())
        for pattern, _ in HISTORY:
            for m in re.finditer(pattern, flat, re.IGNORECASE):
                found.append(f"{where}: ...{flat[max(0, m.start() - 50):m.end() + 30]}...")
    return found


def module_doc_problem(source: str) -> str | None:
    doc = ast.get_docstring(ast.parse(source))
    if not doc:
        return "no module docstring"
    lines = len(doc.strip().splitlines())
    return f"module docstring of {lines} lines (at most {MAX_LINES})" if lines > MAX_LINES else None


@pytest.mark.parametrize("pattern,planted", HISTORY, ids=[p for p, _ in HISTORY])
def test_each_history_pattern_catches_its_planted_example(pattern: str, planted: str) -> None:
    assert re.search(pattern, planted, re.IGNORECASE)
    assert history_in(f'"""{planted}"""\n')
    assert history_in(f'"""Ok."""\n\ndef f():\n    """{planted}"""\n')


def test_the_checks_fail_on_planted_modules() -> None:
    assert module_doc_problem("x = 1\n") == "no module docstring"
    assert module_doc_problem('"""' + "line\n" * (MAX_LINES + 1) + '"""\n')
    assert module_doc_problem('"""' + "line\n" * MAX_LINES + '"""\n') is None


def test_every_module_docstring_is_short() -> None:
    problems = [f"{p.relative_to(ROOT)}: {problem}" for p in _modules()
                if (problem := module_doc_problem(p.read_text(encoding="utf-8")))]
    assert not problems, "\n".join(problems)


def test_no_docstring_quotes_history_or_figures() -> None:
    found = [f"{p.relative_to(ROOT)}: {hit}" for p in _modules()
             for hit in history_in(p.read_text(encoding="utf-8"))]
    assert not found, "move these to docs/design.md, docs/performance.md or a commit " \
                      "message:\n" + "\n".join(found)


def _load(where: str) -> object:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


def _params(fn: object) -> list[str]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    return [n for n in sig.parameters if n not in ("self", "cls")]


def _returns(fn: object) -> bool:
    ann = inspect.signature(fn).return_annotation  # type: ignore[arg-type]
    return ann not in (None, "None", inspect.Signature.empty)


def _contract(owner: type, name: str) -> str:
    """`owner.name`'s docstring with the Args/Returns of the nearest class above it that
    defines `name` with them (an override documents what it does, its contract once)."""
    doc = inspect.getdoc(getattr(owner, name)) or ""
    if "Args:" in doc or "Returns:" in doc:
        return doc
    for base in owner.__mro__[1:]:
        above = inspect.getdoc(vars(base)[name]) if name in vars(base) else None
        if above and ("Args:" in above or "Returns:" in above):
            return doc + "\n\n" + above
    return doc


def contract_problem(owner: type, name: str) -> str | None:
    """What `owner.name`'s docstring lacks: a docstring, `Args:` for its arguments,
    `Returns:` (or `Yields:`) for its value, its own or its contract's (`_contract`);
    None when it has them all."""
    fn = inspect.getattr_static(owner, name)
    fn = getattr(fn, "__func__", fn)
    doc = _contract(owner, name)
    where = f"{owner.__module__}.{owner.__qualname__}.{name}"
    if not doc:
        return f"{where}: no docstring"
    if _params(fn) and "Args:" not in doc:
        return f"{where}: takes {', '.join(_params(fn))} but has no Args:"
    if _returns(fn) and "Returns:" not in doc and "Yields:" not in doc:
        return f"{where}: returns a value but has no Returns:"
    return None


def _api_methods(cls: type) -> list[str]:
    names = [n for n, v in vars(cls).items()
             if not n.startswith("_") and callable(getattr(v, "__func__", v))
             and not isinstance(v, type)]
    return names + list(HOOKS.get(cls.__name__, ()))


def test_contract_problem_fails_on_planted_methods() -> None:
    class Planted:
        def bare(self, x: int) -> int:
            return x

        def no_args(self, x: int) -> int:
            """Doubles.

            Returns:
                twice x."""
            return 2 * x

        def fine(self, x: int) -> int:
            """Doubles.

            Args:
                x: a number.
            Returns:
                twice x."""
            return 2 * x

        def nothing(self) -> None:
            """Does nothing."""

    assert contract_problem(Planted, "bare")
    assert "Args:" in (contract_problem(Planted, "no_args") or "")
    assert contract_problem(Planted, "fine") is None
    assert contract_problem(Planted, "nothing") is None
    assert _api_methods(Planted) == ["bare", "no_args", "fine", "nothing"]

    class Override(Planted):
        def fine(self, x: int) -> int:
            """Doubles, by adding."""
            return x + x

        def no_args(self, x: int) -> int:
            """Doubles, by shifting."""
            return x << 1

    assert contract_problem(Override, "fine") is None  # Args/Returns from Planted.fine
    assert "Args:" in (contract_problem(Override, "no_args") or "")  # Planted's lacks them


def test_the_plugin_api_documents_args_and_returns() -> None:
    problems = []
    for where in PLUGIN_API:
        cls = _load(where)
        assert isinstance(cls, type) and cls.__doc__, f"{where}: no class docstring"
        problems += [p for n in _api_methods(cls) if (p := contract_problem(cls, n))]
    for registry, base, methods in TASK_KINDS:
        for cls in dict.fromkeys(_load(registry).classes.values()):  # type: ignore[attr-defined]
            if cls.__module__.startswith("vbw."):
                if not issubclass(cls, _load(base)):  # type: ignore[arg-type]
                    problems.append(f"{cls.__qualname__}: not a subclass of {base}")
                problems += [p for n in methods if (p := contract_problem(cls, n))]
    assert not problems, "\n".join(problems)
