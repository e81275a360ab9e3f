"""tool_call arms against scripted servers (vbw.generate.tools): what each dialect sends,
how a reply is read, and the cases a real server cannot be made to produce on demand: a
server that ignores tool_choice (refused by the canary), a reply with no tool call, a call
to another function, a function name no dialect accepts, and the in-process refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import load_json, run_vbw
from tests.generate.standin import Canned, StandIn, completion
from vbw.errors import UnsupportedSchema
from vbw.generate.backend import Tool
from vbw.generate.canary import CANARY_EXPECTED, CANARY_TOOL
from vbw.generate.dialects import DIALECTS, dialect_for
from vbw.generate.tools import read_call, wire_name

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}},
          "required": ["answer"]}
TOOL = Tool(name="answer", description="answer accuracy")


def test_names_are_mapped_as_bfcl_maps_them_and_an_unmappable_one_is_refused() -> None:
    assert wire_name("math.factorial") == "math_factorial"
    assert wire_name("get_weather-v2") == "get_weather-v2"
    for bad in ("has space", "x" * 65, "", "ünïcode"):
        with pytest.raises(UnsupportedSchema, match="cannot be sent"):
            wire_name(bad)


def test_every_dialect_offers_one_function_with_the_schema_and_forces_it() -> None:
    """Each dialect's exact form is pinned in tests/generate/test_dialects.py."""
    for name in DIALECTS.kinds:
        fields = dialect_for(name).tool_fields(TOOL, SCHEMA)
        (offered,) = fields["tools"]
        assert offered["type"] == "function"
        assert offered["function"]["name"] == "answer"
        assert offered["function"]["parameters"] == SCHEMA
        assert offered["function"]["description"] == "answer accuracy"
        assert "response_format" not in fields and "json_schema" not in fields
        assert fields["tool_choice"] in ("required", {"type": "function",
                                                      "function": {"name": "answer"}})


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_reading_a_reply() -> None:
    ok = {"content": None, "tool_calls": [_call("answer", '{"answer": 3}')]}
    assert read_call(ok, "answer") == ('{"answer": 3}', ["answer"])
    # content never stands in for a missing call
    assert read_call({"content": '{"answer": 3}'}, "answer") == ("", [])
    other = {"tool_calls": [_call("other", '{"answer": 3}'), _call("answer", "{}")]}
    assert read_call(other, "answer") == ("", ["other", "answer"])
    as_object = {"tool_calls": [_call("answer", {"answer": 3})]}
    assert read_call(as_object, "answer") == ('{"answer":3}', ["answer"])
    assert read_call({"tool_calls": "junk"}, "answer") == ("", [])


def _tool_reply(calls: list[dict[str, Any]] | None, content: str | None = None) -> Canned:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls is not None:
        message["tool_calls"] = calls
    obj = {"object": "chat.completion", "usage": {"completion_tokens": 4},
           "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    return Canned(body=json.dumps(obj).encode())


class ToolServer(StandIn):
    """Answers the canary correctly (both ways) unless `ignore_tool_choice`; every other
    tool request per `behaviour`: `call` the function offered, `none` (plain content), or
    `other` (a call to another function); plain JSON requests get {"answer": 7}."""

    def __init__(self, behaviour: str = "call", ignore_tool_choice: bool = False) -> None:
        super().__init__([])
        self.behaviour, self.ignore = behaviour, ignore_tool_choice

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Canned:
        if method == "GET":
            return super()._answer(method, path, headers, body)
        req = json.loads(body)
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": req})
        canary = json.dumps(CANARY_EXPECTED)
        if "tools" not in req:
            form = req.get("response_format", {})
            schema = form.get("schema") or form.get("json_schema", {}).get("schema")
            return completion(canary if schema and "canary" in schema["properties"]
                              else '{"answer": 7}' if schema else 'Answer: {"answer": 7}')
        name = req["tools"][0]["function"]["name"]
        if self.ignore:
            return _tool_reply(None, content="Leaves fall in the cold")
        if name == CANARY_TOOL:
            return _tool_reply([_call(name, canary)])
        if self.behaviour == "none":
            return _tool_reply(None, content='{"answer": 7}')
        if self.behaviour == "other":
            return _tool_reply([_call("something_else", '{"answer": 7}')])
        return _tool_reply([_call(name, '{"answer": 7}')])


def _run(srv: StandIn, tmp_path: Path, dialect: str = "llama_cpp_python", *extra: str,
         n: int = 1):
    return run_vbw("task=gsm8k", "mode=live", f"n={n}", "arms=tools", "backend=openai",
                   f"backend.base_url={srv.base_url}", "backend.model=m",
                   f"backend.dialect={dialect}", "backend.max_retries=0", *extra,
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=120)


def _one_error(proc) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("vbw: error:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _tool_arms(tmp_path: Path) -> dict[str, dict[str, Any]]:
    lines = (tmp_path / "o/replay.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(x)["id"]: json.loads(x)["arms"] for x in lines[1:]
            if "id" in json.loads(x)}


def test_the_canary_refuses_a_server_that_ignores_tool_choice(tmp_path: Path) -> None:
    with ToolServer(ignore_tool_choice=True) as srv:
        line = _one_error(_run(srv, tmp_path, "ollama"))
    assert "canary (tool call) failed on engine server-ollama" in line
    assert "no tool call" in line and "tool_choice" in line
    # the plain canary passed first; nothing was generated
    assert not (tmp_path / "o/replay.jsonl").exists()


def test_a_run_without_tool_call_arms_skips_the_tool_check(tmp_path: Path) -> None:
    with ToolServer(ignore_tool_choice=True) as srv:
        proc = _run(srv, tmp_path, "ollama", "arms.kinds=[prompt_json,constrained]")
        assert proc.returncode == 0, proc.stderr
        assert not any("tools" in r["body"] for r in srv.posts)


def test_a_forced_call_is_the_arm_s_text_and_its_message_is_kept(tmp_path: Path) -> None:
    with ToolServer("call") as srv:
        proc = _run(srv, tmp_path)
        sent = [r["body"] for r in srv.posts if "tools" in r["body"]]
    assert proc.returncode == 0, proc.stderr
    arm = _tool_arms(tmp_path)["gsm8k_test_0"]["tool_call[answer]"]
    assert arm["text"] == '{"answer": 7}' and arm["finish_reason"] == "stop"
    assert arm["tool"] == {"name": "answer", "sent": "answer", "called": ["answer"]}
    assert arm["message"]["tool_calls"][0]["function"]["name"] == "answer"
    assert all(b["stream"] is False for b in sent)  # tool requests are never streamed
    item = [b for b in sent if b["tools"][0]["function"]["name"] == "answer"][0]
    assert item["tools"][0]["function"]["description"] == "answer accuracy"  # the task label
    report = load_json(tmp_path / "o/report.json")
    assert report["arms"]["tool_call[answer]"]["schema_validity"]["rate"] == 1.0
    pairs = {(c["from"], c["to"]): c["kind"] for c in report["comparisons"]}
    assert pairs[("constrained[answer]", "tool_call[answer]")] == "headline"
    assert pairs[("prompt_json[answer]", "tool_call[answer]")] == "headline"


def test_a_tools_run_of_five_items_rescores_from_its_header_alone(tmp_path: Path) -> None:
    """Re-scoring needs neither arms=tools nor n=5 repeated (vbw.modes.selection): the
    header's arms and n are scored, with no warning (none of 'items missing')."""
    with ToolServer("call") as srv:
        made = _run(srv, tmp_path, n=5)
    assert made.returncode == 0, made.stderr
    proc = run_vbw("task=gsm8k", f"replay={tmp_path}/o/replay.jsonl",
                   f"hydra.run.dir={tmp_path}/r", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    report = load_json(tmp_path / "r/report.json")
    assert (report["n"], report["n_task"], report["missing"]["n"]) == (5, 5, 0)
    assert list(report["arms"]) == list(load_json(tmp_path / "o/report.json")["arms"]) == [
        f"{kind}[{s}]" for s in ("answer", "reasoning")
        for kind in ("prompt_json", "constrained", "tool_call")]


@pytest.mark.parametrize("behaviour, called", [("none", []), ("other", ["something_else"])])
def test_no_call_or_another_function_is_recorded_as_such_and_scores_invalid(
        tmp_path: Path, behaviour: str, called: list[str]) -> None:
    with ToolServer(behaviour) as srv:
        proc = _run(srv, tmp_path)
    assert proc.returncode == 0, proc.stderr
    arm = _tool_arms(tmp_path)["gsm8k_test_0"]["tool_call[answer]"]
    assert arm.get("text") is None  # never the content, nor the other call's arguments
    assert arm["tool"]["called"] == called
    if behaviour == "none":
        assert arm["message"]["content"] == '{"answer": 7}'
    report = load_json(tmp_path / "o/report.json")
    tool = report["arms"]["tool_call[answer]"]
    assert tool["schema_validity"]["rate"] == 0.0 and tool["answer_accuracy"]["rate"] == 0.0
    assert report["arms"]["constrained[answer]"]["schema_validity"]["rate"] == 1.0
    assert report["ledger"][0]["tool_call[answer]"] == "invalid/wrong"


def test_a_function_name_no_dialect_accepts_is_recorded_unsupported(tmp_path: Path) -> None:
    with ToolServer("call") as srv:
        proc = _run(srv, tmp_path, "llama_cpp_python", f"+task.tool.name={'x' * 70}")
        assert not any(r["body"]["tools"][0]["function"]["name"].startswith("xxx")
                       for r in srv.posts if "tools" in r["body"])
    # recorded for the item (never sent); with every item excluded, scoring stops in one line
    arm = _tool_arms(tmp_path)["gsm8k_test_0"]["tool_call[answer]"]
    assert "cannot be sent" in arm["unsupported_schema"] and arm.get("text") is None
    line = _one_error(proc)
    assert "every held item is excluded" in line and "cannot be sent" in line


def test_the_local_backend_refuses_tool_call_arms_at_start(tmp_path: Path) -> None:
    proc = run_vbw("task=gsm8k", "mode=live", "n=1", "backend=local", "arms=tools",
                   f"hydra.run.dir={tmp_path}/o", cwd=tmp_path, timeout=120)
    line = _one_error(proc)
    assert "backend 'local' cannot run tool_call[answer]" in line
    assert "chat template" in line and "backend.dialect=llama_cpp_python" in line
