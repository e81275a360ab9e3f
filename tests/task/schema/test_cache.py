"""The check_schema verdict cache: a schema found valid in one run skips jsonschema's
metaschema pass in the next; absent, corrupt or unwritable cache files change nothing but
the time."""

from __future__ import annotations

import os
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from vbw.task.schema import cache as schemacache, sources as schemas
from vbw.task.schema.cache import VerdictCache

GOOD = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
BAD = {"type": "object", "properties": {"a": {"type": 12}}}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every schema jsonschema's metaschema pass is run on."""
    seen: list[Any] = []
    real = Draft202012Validator.check_schema.__func__  # type: ignore[attr-defined]

    def spy(cls: type, schema: Any, *a: Any, **k: Any) -> None:
        seen.append(schema)
        real(cls, schema, *a, **k)

    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(spy))
    return seen


def new_run(monkeypatch: pytest.MonkeyPatch) -> VerdictCache:
    """A fresh process's cache, as check_schema uses it."""
    cache = VerdictCache()
    monkeypatch.setattr(schemas, "VERDICTS", cache)
    return cache


def expected_file(root: Path) -> Path:
    return root / "vbw" / f"valid-schemas-jsonschema-{version('jsonschema')}.txt"


def test_a_valid_verdict_is_remembered_under_xdg_cache_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[Any]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "absent" / "cache"))
    first = new_run(monkeypatch)
    assert schemas.check_schema(GOOD) is None and calls == [GOOD]
    first.flush()
    lines = expected_file(tmp_path / "absent" / "cache").read_text().splitlines()
    assert lines == [first.digest(GOOD)]
    new_run(monkeypatch)
    assert schemas.check_schema(dict(GOOD)) is None and calls == [GOOD]  # not checked again
    # the same members in another order are another schema (order is part of the contract)
    reordered = {"required": ["a"], **{k: v for k, v in GOOD.items() if k != "required"}}
    assert schemas.check_schema(reordered) is None and len(calls) == 2


def test_an_invalid_schema_is_never_cached_and_keeps_jsonschemas_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[Any]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = new_run(monkeypatch)
    problem = schemas.check_schema(BAD)
    assert problem is not None and problem.startswith("not a valid JSON Schema at properties/a")
    cache.flush()
    assert not expected_file(tmp_path).exists()
    new_run(monkeypatch)
    assert schemas.check_schema(BAD) == problem and len(calls) == 2


def test_a_corrupt_file_only_loses_its_bad_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[Any]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    digest = VerdictCache().digest(GOOD)
    assert digest is not None
    path = expected_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\x00garbage\n" + digest[:20].encode() + b"\n"
                     + digest.upper().encode() + b"\n" + b"z" * 32 + b"\n\n" + os.urandom(64))
    new_run(monkeypatch)
    assert schemas.check_schema(GOOD) is None and calls == [GOOD]  # no line was a digest
    path.write_bytes(os.urandom(100) + b"\n" + digest.encode() + b"\n" + os.urandom(100))
    new_run(monkeypatch)
    assert schemas.check_schema(GOOD) is None and calls == [GOOD]  # the whole line counts


@pytest.mark.parametrize("how", ["cache home is a file", "writes refused"])
def test_an_unwritable_cache_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        calls: list[Any], how: str) -> None:
    if how == "cache home is a file":
        (tmp_path / "file").write_text("not a folder")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    else:  # a read-only file system (the tests may run as root, whom chmod does not stop)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

        def refuse(*a: Any, **k: Any) -> int:
            raise PermissionError(30, "Read-only file system")

        monkeypatch.setattr(schemacache.os, "open", refuse)
    cache = new_run(monkeypatch)
    assert schemas.check_schema(GOOD) is None
    cache.flush()  # nothing raised
    new_run(monkeypatch)
    assert schemas.check_schema(GOOD) is None and calls == [GOOD, GOOD]


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert schemacache.cache_file() == expected_file(tmp_path / ".cache")


def test_only_plain_json_is_cached() -> None:
    """A schema whose JSON text would stand for another value (a tuple, a non-string key,
    NaN) is checked every time: its digest could be another schema's."""
    cache = VerdictCache()
    assert cache.digest({"enum": (1, 2)}) is None
    assert cache.digest({"properties": {1: {}}}) is None
    assert cache.digest({"const": float("nan")}) is None
    assert cache.digest({"const": 1}) != cache.digest({"const": 1.0}) != cache.digest(
        {"const": True})


def test_the_suite_never_writes_to_the_users_cache() -> None:
    """tests/conftest.py points XDG_CACHE_HOME at a session folder (inherited by every
    `python -m vbw` subprocess), so the cache file lands outside ~/.cache."""
    home_cache = Path.home() / ".cache"
    assert not schemacache.cache_file().is_relative_to(home_cache)
    assert schemacache.cache_file().is_relative_to(os.environ["XDG_CACHE_HOME"])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_what_it_learned_on_its_way_out_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """vbw's forked workers leave with os._exit (vbw.parallel.leave): the verdicts a child
    learned are appended then, and the parent's pending ones are left to the parent."""
    from vbw.parallel import leave

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = VerdictCache()
    monkeypatch.setattr("vbw.parallel._AT_LEAVE", [cache.flush])
    parents, childs = "a" * 32, "b" * 32
    cache.remember(parents)  # pending in the parent when it forks
    pid = os.fork()
    if pid == 0:
        cache.remember(childs)
        leave(0)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    path = schemacache.cache_file()
    assert path.read_text().split() == [childs]
    cache.flush()
    assert path.read_text().split() == [childs, parents]
