"""What a replay header says about the software and machine: stable keys, honest values."""

from __future__ import annotations

from importlib import metadata

import pytest

from vbw.generate import provenance
from vbw.generate.provenance import PACKAGES, hardware, versions

KEYS = {"vbw", *PACKAGES} - {"validbutwrong"}


def test_versions_of_installed_packages() -> None:
    got = versions()
    assert set(got) == KEYS
    assert got["vbw"] == metadata.version("validbutwrong")


def test_missing_packages_keep_their_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(provenance.metadata, "version", absent)
    assert versions() == dict.fromkeys(KEYS)


# platform.platform() runs `uname -p` (once per process): a program start, so not fast
@pytest.mark.slow(reason="platform.platform() starts uname")
def test_hardware_records_threads() -> None:
    hw = hardware(3)
    assert hw["n_threads"] == 3 and hw["cpu"] and hw["logical_cpus"]


def test_the_engine_and_backend_packages_join_the_versions() -> None:
    """A run records the versions of what its backend and engine declare they run on:
    llguidance's among them when it is the engine."""
    from vbw.generate.engines import LLGuidanceEngine, OutlinesEngine

    got = versions(("llama-cpp-python", *LLGuidanceEngine.requires))
    assert set(got) == KEYS | {"llama-cpp-python", "llguidance"}
    try:
        assert got["llguidance"] == metadata.version("llguidance")
    except metadata.PackageNotFoundError:
        assert got["llguidance"] is None
    assert OutlinesEngine.requires == ("outlines", "outlines-core")


def test_no_kind_is_named_in_the_core_packages() -> None:
    """What only a backend or an engine runs on is its kind's to declare: the core list
    names none of those packages, so a server run records no engine's version."""
    from vbw.config import BACKENDS
    from vbw.generate.engines import ENGINES

    declared = {p for reg in (BACKENDS, ENGINES) for name in reg.kinds
                for p in reg.get(name).requires}
    assert {"llama-cpp-python", "outlines", "outlines-core", "llguidance"} <= declared
    assert not declared & set(PACKAGES)


def test_the_local_backend_adds_its_engines_packages_to_its_kinds() -> None:
    """What live.py passes to versions(): the kind's packages (llama-cpp-python) and the
    engine's, each declared once, in its own module."""
    from types import SimpleNamespace

    from vbw.config import BACKENDS
    from vbw.generate.engines import ENGINES
    from vbw.generate.local import LocalBackend

    engine = SimpleNamespace(name="llguidance", requires=ENGINES.get("llguidance").requires)
    backend = LocalBackend(SimpleNamespace(sequences=1), engine)  # type: ignore[arg-type]
    assert (*BACKENDS.get("local").requires, *backend.requires) == \
        ("llama-cpp-python", "llguidance")
