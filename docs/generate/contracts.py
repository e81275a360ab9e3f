"""docs/architecture.md's list of import contracts, generated from pyproject.toml's
`[tool.importlinter]` (the contracts `lint-imports` and tests/test_layers.py check), so the
page says what is enforced and nothing else."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _names(modules: list[str]) -> str:
    return ", ".join(f"`{m}`" for m in modules)


def _rule(c: dict) -> str:
    """What one contract requires, in words."""
    kind = c["type"]
    if kind == "layers":
        inside = " (every module directly under it in a layer)" if c.get("exhaustive") else ""
        return (f"{len(c['layers'])} layers in {_names(c['containers'])}{inside}, as the "
                "table above: a layer imports only its own and lower ones")
    if kind == "protected":
        return (f"only {_names(c['allowed_importers'])} import "
                f"{_names(c['protected_modules'])}")
    if kind == "forbidden":
        what = "the module itself" if c.get("as_packages") is False else "and their modules"
        return (f"{_names(c['source_modules'])} ({what}) import none of "
                f"{_names(c['forbidden_modules'])}, directly or through other modules")
    if kind == "acyclic_siblings":
        return (f"under {_names(c['ancestors'])}, no cycle between the modules or packages "
                "of one package")
    if kind == "independence":
        return f"none of {_names(c['modules'])} imports another, directly or not"
    raise ValueError(f"pyproject.toml: contract {c['id']}: no wording for type {kind!r}")


def contracts_table(pyproject: Path = ROOT / "pyproject.toml") -> str:
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    rows = ["| id | contract | type | rule | imports it ignores |", "|---|---|---|---|---|"]
    for c in config["contracts"]:
        ignored = _names(c.get("ignore_imports", [])) or "none"
        rows.append(f"| `{c['id']}` | {c['name']} | {c['type']} | {_rule(c)} | {ignored} |")
    return "\n".join(rows)
