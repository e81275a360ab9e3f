"""Imports point down the layers only, and no import closes a circle.

The layers, lowest first, are named in LAYERS and described in docs/architecture.md. The
graph is read from the source with `ast` (no module is imported): every `import` statement
of a vbw module counts, at module level, inside a function (a lazy import is still a
dependency: it only moves the failure to the moment the code runs) or under
`if TYPE_CHECKING:`. A module may import its own layer or a lower one; the graph over
every vbw module has no cycle. Scoring and reporting also never import an engine or the
live stack, so replay scoring installs and runs light.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "vbw"
FORBIDDEN = {"vbw.generate", "llama_cpp", "outlines", "outlines_core", "numba",
             "huggingface_hub"}

# Lowest first. A name is a module, or a package and every module under it; a module takes
# the layer of the longest name that covers it ("vbw" itself is the package's __init__
# only). Within a layer any import is allowed as long as it closes no cycle.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("vbw", "vbw.errors", "vbw.validation", "vbw.resources", "vbw.redact",
              "vbw.registry", "vbw.lazy", "vbw.parallel")),
    ("task", ("vbw.task",)),
    ("config", ("vbw.config",)),
    ("replay", ("vbw.replay",)),
    ("formats", ("vbw.formats",)),
    ("score", ("vbw.score",)),
    ("report", ("vbw.report",)),
    ("sweep", ("vbw.sweep",)),
    ("generate", ("vbw.generate",)),
    ("app", ("vbw.modes",)),
    # what a user or Hydra calls: the command line (the console script, Hydra's task
    # function and the callbacks conf/config.yaml names), and the callbacks' former names
    ("entry", ("vbw.cli", "vbw.__main__", "vbw.sweep.callback", "vbw.hydrafiles")),
]


def module_name(path: Path, pkg: Path = PKG) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(pkg: Path = PKG) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its __init__.py)."""
    return {module_name(f, pkg): f for f in sorted(pkg.rglob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> list[str]:
    """The dotted names one import statement may load: `from a import b` is a.b when b is
    a module, else a; a relative import is resolved against the importing module."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        here = name.split(".") if is_package else name.split(".")[:-1]
        here = here[:len(here) - (node.level - 1)]
        base = ".".join(here + ([base] if base else []))
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The package modules `path` imports anywhere in its body (see the module docstring)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = _targets(node, name, path.name == "__init__.py")
        if isinstance(node, ast.ImportFrom):  # a.b if it is a module, else the package a
            subs = [n for n in names[1:] if n in known]
            names = subs if len(subs) == len(names) - 1 else [names[0], *subs]
        for n in names:
            while n and n not in known:  # `import vbw.task.arms` loads vbw.task.arms
                n = n.rpartition(".")[0]
            if n and n != name:
                found.add(n)
    return found


def import_graph(pkg: Path = PKG) -> dict[str, set[str]]:
    mods = modules(pkg)
    return {name: imports(path, name, set(mods)) for name, path in mods.items()}


def layer_of(name: str, layers: list[tuple[str, tuple[str, ...]]] = LAYERS) -> int | None:
    best: tuple[int, int] | None = None  # (length of the covering name, layer index)
    for rank, (_, names) in enumerate(layers):
        for n in names:
            covers = name == n or (n != "vbw" and name.startswith(n + "."))
            if covers and (best is None or len(n) > best[0]):
                best = (len(n), rank)
    return None if best is None else best[1]


def upward(graph: dict[str, set[str]],
           layers: list[tuple[str, tuple[str, ...]]] = LAYERS) -> list[str]:
    """Every import from a lower layer to a higher one, worded for the failure message."""
    out = []
    for src, dsts in sorted(graph.items()):
        for dst in sorted(dsts):
            a, b = layer_of(src, layers), layer_of(dst, layers)
            if a is not None and b is not None and b > a:
                out.append(f"{src} ({layers[a][0]}) imports {dst} ({layers[b][0]})")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan),
    as a path that starts and ends on the same module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_in(comp, graph) for comp in comps]


def _path_in(comp: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A cycle through the component's first module, by breadth-first search back to it."""
    start = min(comp)
    prev: dict[str, str] = {}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v] & comp):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                todo.append(w)
    raise AssertionError(f"no cycle through {start} in {sorted(comp)}")


GRAPH = import_graph()


def test_every_module_has_a_layer_and_every_layer_name_is_used() -> None:
    assert "vbw.cli.job" in GRAPH and "vbw.task.runner" in GRAPH  # the walk saw the package
    unplaced = [m for m in GRAPH if layer_of(m) is None]
    assert not unplaced, f"give these modules a layer in LAYERS: {unplaced}"
    stale = [n for _, names in LAYERS for n in names if n not in GRAPH]
    assert not stale, f"LAYERS names modules that do not exist: {stale}"


def test_no_import_points_up_a_layer() -> None:
    bad = upward(GRAPH)
    assert not bad, "imports from a lower layer to a higher one:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_docs_name_the_same_layers() -> None:
    """docs/architecture.md's table is LAYERS, in order, with the same modules."""
    import re

    doc = (PKG.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1:3] for line in doc.splitlines()
            if line.startswith("| ") and not line.startswith("| layer |")]
    table = [(name.strip(), tuple(re.findall(r"`(vbw[\w.]*)`", mods))) for name, mods in rows]
    assert table == LAYERS


def test_the_walk_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    """The checks above can fail: the walk finds every kind of import, and a planted cycle
    and an upward import are reported."""
    pkg = tmp_path / "vbw"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("from . import a\n")
    (pkg / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vbw.high import H\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from ..high import g\n    import json\n")
    (pkg / "high.py").write_text("import vbw.low.a\nfrom vbw.low import b, missing_name\n")
    graph = import_graph(pkg)
    assert graph == {"vbw": set(), "vbw.low": {"vbw.low.a"}, "vbw.low.a": {"vbw.high"},
                     "vbw.low.b": {"vbw.high"},
                     "vbw.high": {"vbw.low", "vbw.low.a", "vbw.low.b"}}
    layers = [("low", ("vbw", "vbw.low")), ("high", ("vbw.high",))]
    assert upward(graph, layers) == ["vbw.low.a (low) imports vbw.high (high)",
                                     "vbw.low.b (low) imports vbw.high (high)"]
    assert cycles(graph) == [["vbw.high", "vbw.low.a", "vbw.high"]]
    assert cycles({"x": {"y"}, "y": {"z"}, "z": set()}) == []


@pytest.mark.parametrize("layer", ["score", "report", "task", "replay", "formats", "sweep"])
def test_score_report_task_replay_formats_never_import_the_live_stack(layer: str) -> None:
    for f in (PKG / layer).glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
        bad = {m for m in found if any(m == x or m.startswith(x + ".") for x in FORBIDDEN)}
        assert not bad, f"{f.relative_to(PKG)} imports {bad}"


def test_replay_mode_loads_no_live_module() -> None:
    import subprocess
    import sys

    code = ("import sys, vbw.cli.job, vbw.cli.command; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('llama_cpp', 'outlines', 'outlines_core', 'numba', 'huggingface_hub') "
            "or m.startswith('vbw.generate')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
