"""`$ref` never leaves the schema: a listener on 127.0.0.1 sees no connection from any task,
schema or config, and every reference that does not resolve inside the schema is one line,
exit 2, at load, in every mode (issue 17, item 3)."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from tests.conftest import REPLAYS, one_line_error, portable_task, run_vbw
from vbw.task.refs import ref_problem
from vbw.task.validity import Validators

BOUND_S = 30
GSM8K_REPLAY = REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl"


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    yield lst
    lst.close()


def _url(lst: Listener, name: str = "remote.json") -> str:
    return f"http://127.0.0.1:{lst.port}/{name}"


def _answer_schema(tmp: Path, schema: dict[str, Any]) -> Path:
    data = portable_task("gsm8k")
    data["schemas"]["answer"]["schema"] = schema
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _per_item(tmp: Path, schema: dict[str, Any]) -> Path:
    """A task whose answer schema is read from each item's data row."""
    data = portable_task("gsm8k")
    rows = tmp / "rows.jsonl"
    rows.write_text("".join(json.dumps({"question": f"q{i}", "answer": "#### 1",
                                        "schema": schema}) + "\n" for i in range(200)))
    data["dataset"] = {**data["dataset"], "path": str(rows), "first": None}
    data["dataset"]["fields"]["schema"] = "schema"
    data["schemas"]["answer"] = {"kind": "per_item", "path": "schema"}
    path = tmp / "p.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


HOSTILE_REFS: dict[str, tuple[str, str]] = {
    # name: (the $ref, a word the line must carry)
    "http URL": ("URL", "points outside the schema"),
    "file URL": ("file:///etc/passwd", "points outside the schema"),
    "relative file": ("../../secret.json", "points outside the schema"),
    "missing local pointer": ("#/$defs/nope", "does not resolve inside the schema"),
    "missing anchor": ("#nope", "does not resolve inside the schema"),
}


@pytest.mark.parametrize("mode", ["check", "replay"])
@pytest.mark.parametrize("case", list(HOSTILE_REFS))
def test_a_ref_outside_the_schema_is_one_line_at_load(tmp_path: Path, listener: Listener,
                                                      case: str, mode: str) -> None:
    ref, word = HOSTILE_REFS[case]
    ref = _url(listener) if ref == "URL" else ref
    path = _answer_schema(tmp_path, {"type": "object",
                                     "properties": {"answer": {"$ref": ref}}})
    args = [f"task.files=[{path}]", f"mode={mode}", f"hydra.run.dir={tmp_path}/out"]
    if mode == "replay":
        args.append(f"replay={GSM8K_REPLAY}")
    start = time.perf_counter()
    line = one_line_error(run_vbw(*args, cwd=tmp_path, timeout=BOUND_S * 2))
    assert time.perf_counter() - start < BOUND_S
    assert "schemas.answer" in line and repr(ref) in line and word in line, line
    assert listener.accepted == 0


@pytest.mark.parametrize("mode", ["check", "replay"])
def test_a_per_item_schema_ref_is_refused_as_the_item_loads(tmp_path: Path, listener: Listener,
                                                            mode: str) -> None:
    path = _per_item(tmp_path, {"type": "object", "$ref": _url(listener)})
    args = [f"task.files=[{path}]", f"mode={mode}", f"hydra.run.dir={tmp_path}/out"]
    if mode == "replay":  # the bundled replay's ids, its texts scored against these rows
        args += [f"replay={GSM8K_REPLAY}", "allow_task_mismatch=true"]
    start = time.perf_counter()
    line = one_line_error(run_vbw(*args, cwd=tmp_path, timeout=BOUND_S * 2))
    assert time.perf_counter() - start < BOUND_S
    assert "schemas.answer" in line and "item gsm8k_test_0" in line, line
    assert "points outside the schema" in line
    assert listener.accepted == 0


def test_no_task_schema_or_config_connects(tmp_path: Path, listener: Listener) -> None:
    """URLs wherever a task, schema or config can name a place: $schema, $id with a relative
    $ref that resolves inside, the dataset, the replay. None is fetched; the schema that
    resolves inside scores normally."""
    inside = {"$schema": _url(listener, "meta"), "$id": _url(listener, "root.json"),
              "$defs": {"n": {"type": "integer"}}, "type": "object",
              "properties": {"answer": {"$ref": "#/$defs/n"}}, "required": ["answer"]}
    path = _answer_schema(tmp_path, inside)
    ok = run_vbw(f"task.files=[{path}]", "mode=replay", f"replay={GSM8K_REPLAY}",
                 f"hydra.run.dir={tmp_path}/ok", cwd=tmp_path, timeout=BOUND_S * 4)
    # the schema differs from the replay's, so the replay is refused as stale or scores:
    # either way no connection and no traceback
    assert "Traceback" not in ok.stderr and ok.returncode in (0, 1, 2), ok.stderr[-2000:]
    data = portable_task("gsm8k")
    data["dataset"]["path"] = _url(listener, "data.jsonl")
    bad_data = tmp_path / "d.yaml"
    bad_data.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    one_line_error(run_vbw(f"task.files=[{bad_data}]", "mode=check", cwd=tmp_path))
    one_line_error(run_vbw("task=gsm8k", "mode=replay", f"replay={_url(listener, 'r.jsonl')}",
                           f"hydra.run.dir={tmp_path}/r", cwd=tmp_path))
    one_line_error(run_vbw(f"hydra.searchpath=[{_url(listener, 'conf')}]", "task=gsm8k",
                           "mode=check", cwd=tmp_path))
    assert listener.accepted == 0


def test_refs_that_resolve_inside_pass() -> None:
    assert ref_problem({"$defs": {"a": {"type": "integer"}}, "$ref": "#/$defs/a"}) is None
    assert ref_problem({"$ref": "#x", "$defs": {"x": {"$anchor": "x"}}}) is None
    assert ref_problem({"$defs": {"a": {"$id": "http://e.com/a", "$anchor": "n"}},
                        "$ref": "http://e.com/a#n"}) is None  # an embedded resource
    assert ref_problem({"properties": {"$ref": {"type": "string"}}}) is None  # a name
    assert ref_problem({"enum": [{"$ref": "http://x"}]}) is None  # a value, never followed
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#",
              "definitions": {"a": {}}, "$ref": "#/definitions/a"}
    assert ref_problem(draft7) is None
    assert "outside" in (ref_problem({"$id": "http://e.com/r.json",
                                      "properties": {"x": {"$ref": "other.json"}}}) or "")


LOOP = "loops back to where it started without descending into the value"


@pytest.mark.parametrize(("schema", "ref"), [
    ({"$ref": "#"}, "$ref '#'"),
    ({"$defs": {"a": {"$ref": "#/$defs/a"}}}, "$ref '#/$defs/a'"),  # even unreferenced
    ({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]},
                "b": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}},
      "$ref": "#/$defs/a"}, "$ref '#/$defs/"),
    ({"properties": {"x": {"not": {"$ref": "#/properties/x"}}}}, "$ref '#/properties/x'"),
    ({"$defs": {"a": {"if": {"$ref": "#/$defs/a"}}}}, "$ref '#/$defs/a'"),
    ({"$defs": {"a": {"$anchor": "me", "oneOf": [{"$ref": "#me"}]}}}, "$ref '#me'"),
])
def test_a_ref_that_loops_in_place_is_refused(schema: dict, ref: str) -> None:
    """Validating against it would recurse without end (jsonschema: RecursionError)."""
    problem = ref_problem(schema)
    assert problem is not None and problem.startswith(ref) and LOOP in problem, problem


@pytest.mark.parametrize("schema", [
    # recursion through a part of the value ends where the value ends
    {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
     "$ref": "#/$defs/node"},
    {"type": "array", "items": {"$ref": "#"}},
    # the same definition reached twice, no cycle
    {"$defs": {"a": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]},
])
def test_refs_that_descend_are_no_loop(schema: dict) -> None:
    assert ref_problem(schema) is None


def test_a_ref_loop_is_one_line_in_check_mode(tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["schemas"]["answer"]["schema"]["$ref"] = "#"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    line = one_line_error(run_vbw(f"task.files=[{path}]", "mode=check", cwd=tmp_path))
    assert "schemas.answer" in line and f"$ref '#' {LOOP}" in line


def test_validators_never_fetch(listener: Listener) -> None:
    """Even a schema that skipped the load check cannot make a validator fetch."""
    schema = {"$ref": _url(listener)}
    with pytest.raises(Exception) as e:
        Validators().is_valid(schema, 1)
    assert "outside the schema" in str(e.value.__cause__ or e.value) or \
        "Unresolvable" in repr(e.value)
    assert listener.accepted == 0
