"""Imports point down the layers only, and no import closes a circle: the import-linter
contracts of pyproject.toml (`[tool.importlinter]`, described in docs/architecture.md) hold
on the package, and each of them breaks when a violation is planted in a copy of it."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

if sys.version_info < (3, 11):  # import-linter's current releases need 3.11 (CI runs it)
    pytest.skip("import-linter needs Python 3.11", allow_module_level=True)

from importlinter.application import use_cases  # noqa: E402
from importlinter.configuration import configure  # noqa: E402

# what `lint-imports` sets up before it reads a config (its contract types are registered
# by a private function: if it goes, this fails loudly, never silently)
configure()
use_cases._register_built_in_contract_types()

CONFIG = ROOT / "pyproject.toml"


def broken_contracts(monkeypatch: pytest.MonkeyPatch | None = None,
                     package_parent: Path | None = None) -> dict[str, str]:
    """The ids of the contracts `lint-imports` would call broken, with their names; for the
    package found on sys.path, or for the copy of `vbw` under `package_parent`."""
    if package_parent is not None:
        assert monkeypatch is not None
        # grimp finds the package by importlib's find_spec, which asks sys.modules first
        monkeypatch.delitem(sys.modules, "vbw", raising=False)
        monkeypatch.syspath_prepend(str(package_parent))
    report = use_cases.create_report(use_cases.read_user_options(str(CONFIG)), cache_dir=None)
    assert not report.could_not_run and not report.invalid_contract_options, \
        report.invalid_contract_options
    broken = {}
    for contract, check in report.get_contracts_and_checks():
        if not check.kept:
            contract.render_broken_contract(check)  # the chains, in the captured stdout
            broken[contract.contract_options["id"]] = contract.name
    return broken


def test_the_package_keeps_every_contract() -> None:
    broken = broken_contracts()
    assert not broken, f"broken import contracts (their imports: captured stdout): {broken}"


# Each case plants files (path -> text; an existing file gets the text appended) into a
# copy of vbw and names the contracts that must then break.
PLANTED = {
    "a lazy upward import": (
        {"vbw/replay/planted.py": "def f():\n    from vbw.score import metrics\n"},
        {"layers", "acyclic"}),
    "an upward import under TYPE_CHECKING": (
        {"vbw/task/planted.py": "from typing import TYPE_CHECKING\n"
                                "if TYPE_CHECKING:\n    from vbw.config import RunConfig\n"},
        {"layers", "acyclic"}),
    "a relative upward import": (
        {"vbw/report/planted.py": "from ..sweep import status\n"},
        {"layers", "acyclic"}),
    "a cycle inside a layer": (
        {"vbw/task/planted_a.py": "from vbw.task import planted_b\n",
         "vbw/task/planted_b.py": "def f():\n    from vbw.task import planted_a\n"},
        {"acyclic"}),
    "a module directly under vbw/ in no layer": (
        {"vbw/stray.py": ""},
        {"layers"}),
    "the live stack imported lazily by scoring": (
        {"vbw/score/planted.py": "def f():\n    import llama_cpp\n"},
        {"light"}),
    "the live stack reached indirectly, through a layer that may import it": (
        {"vbw/config.py": "\ndef _planted():\n    import outlines\n",
         "vbw/report/planted.py": "import vbw.config\n"},
        {"light"}),
    "the sweep callback imported below the entry layer": (
        {"vbw/modes/planted.py": "from vbw.sweep.callback import SweepEnd\n"},
        {"callback"}),
    "the package's __init__ importing a module": (
        {"vbw/__init__.py": "\nfrom vbw import errors\n"},
        {"init"}),
    "one mode importing another": (
        {"vbw/modes/check.py": "\ndef _planted():\n    from vbw.modes import compare\n"},
        {"modes"}),
    "one engine importing another": (
        {"vbw/generate/engines/gbnf.py": "\nfrom vbw.generate.engines import outlines\n"},
        {"engines"}),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("pristine") / "vbw"
    shutil.copytree(ROOT / "vbw", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.parametrize("case", list(PLANTED))
def test_each_contract_breaks_on_a_planted_violation(case: str, pristine: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Lazy, TYPE_CHECKING, relative and indirect imports all count."""
    files, expected = PLANTED[case]
    shutil.copytree(pristine, tmp_path / "vbw")
    for rel, text in files.items():
        path = tmp_path / rel
        path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + text,
                        encoding="utf-8")
    assert set(broken_contracts(monkeypatch, tmp_path)) == expected


def layer_table() -> list[tuple[str, ...]]:
    """The layers contract, lowest first, as docs/architecture.md's table names them:
    full module names, the package's __init__ (`vbw`) in base and the sweep callback, which
    the contract lets import anything, in entry."""
    import tomllib

    contracts = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["id"] == "layers")
    [container] = layers["containers"]
    rows = [tuple(f"{container}.{m.strip()}" for m in re.split(r"[:|]", layer))
            for layer in reversed(layers["layers"])]
    rows[0] = (container, *rows[0])
    rows[-1] = (*rows[-1], "vbw.sweep.callback")
    return rows


def test_docs_name_the_same_layers() -> None:
    """docs/architecture.md's table is the layers contract, in order, with the same modules."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The layers, lowest first", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| layer |")]
    table = [tuple(re.findall(r"`(vbw[\w.]*)`", mods)) for _, mods in rows]
    assert table == layer_table()


def test_replay_mode_loads_no_live_module() -> None:
    import subprocess

    code = ("import sys, vbw.cli.job, vbw.cli.command; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('llama_cpp', 'outlines', 'outlines_core', 'numba', 'huggingface_hub') "
            "or m.startswith('vbw.generate')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
