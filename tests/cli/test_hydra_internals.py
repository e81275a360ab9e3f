"""vbw.cli.hydra_internals: the only module that touches `hydra._internal`, pinned to the
Hydra versions it is known to work with."""

from __future__ import annotations

import ast
import importlib
import inspect
from importlib.metadata import version
from pathlib import Path

from packaging.version import Version

from vbw.cli import hydra_internals
from vbw.cli.hydra_internals import INTERNALS, SUPPORTED

PKG = Path(__file__).resolve().parents[2] / "vbw"


def test_the_installed_hydra_is_a_supported_version() -> None:
    lo, hi = (Version(".".join(map(str, v))) for v in SUPPORTED)
    assert lo <= Version(version("hydra-core")) < hi


def test_the_supported_range_is_pyprojects() -> None:
    text = (PKG.parent / "pyproject.toml").read_text(encoding="utf-8")
    lo, hi = (".".join(map(str, v)) for v in SUPPORTED)
    assert f'"hydra-core>={lo},<{hi.removesuffix(".0")}"' in text


def test_every_internal_symbol_is_there_with_the_expected_signature() -> None:
    for module, qualname, params in INTERNALS:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        names = tuple(p for p in inspect.signature(obj).parameters if p != "self")
        assert names == params, f"{module}.{qualname}{names}"


def test_nothing_else_in_vbw_imports_hydra_internal() -> None:
    for f in PKG.rglob("*.py"):
        mods = {n.module for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                if isinstance(n, ast.ImportFrom) and n.module}
        mods |= {a.name for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                 if isinstance(n, ast.Import) for a in n.names}
        private = {m for m in mods if m.startswith("hydra._internal")}
        if f.name == "hydra_internals.py":
            assert private == {m for m, _, _ in INTERNALS}  # every one listed
        else:
            assert not private, f"{f.relative_to(PKG)} imports {private}"


def test_the_adapter_composes_and_splits_a_sweep() -> None:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from vbw.cli.compose import CONF

    loader = hydra_internals.config_loader(hydra_internals.config_search_path(str(CONF)))
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(
        ["task=gsm8k,demo", "n=3"])
    assert hydra_internals.sweep_jobs(parsed) == [["task=gsm8k", "n=3"], ["task=demo", "n=3"]]
    assert hydra_internals.args_parser().parse_args(["-m", "n=3"]).multirun
