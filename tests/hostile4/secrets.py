"""Secrets a server gives back, or a base URL carries, in any form: whole runs against a
scripted OpenAI-compatible server on 127.0.0.1 (tests/generate/standin.StandIn), each
case with `secrets` that must appear in no file written, nor on stdout or stderr."""

from __future__ import annotations

import contextlib
import json
from base64 import b64encode
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.generate.standin import Canned, StandIn, completion, error
from tests.hostile4 import Case
from vbw.generate.canary import CANARY_EXPECTED, CANARY_TOOL

CLS = "1 secrets"  # the progress line ("1 item(s) to generate") is one stderr line
KEY = "sk-live/Vq7+Tz3m9Kd2Wx8p"  # '/' and '+' change under URL-encoding
HALVES = (KEY[:12], KEY[12:])
ENV = {"VBW_HOSTILE_KEY": KEY}
PASSWORD = "pw-Hs7d2Lq9Zx"
USERINFO = f"ann:{PASSWORD}"
BASIC = b64encode(USERINFO.encode()).decode()
QUERY = {"code": "oauth-Cd4e8Rt1Yh", "pass": "qp-Pw3n7Vb2Mk", "jwt": "eyJ-Jw5t9Fg6Qa"}
ANSWER = '{"answer": 7}'
CAPS = ["arms.max_tokens.free=40", "arms.max_tokens.json=40", "arms.max_tokens.package=40"]

Answer = Callable[[dict[str, Any]], Canned]


class Scripted(StandIn):
    """The stand-in with every POST answered by `answer(request body)`."""

    def __init__(self, answer: Answer) -> None:
        super().__init__([])
        self.answer = answer

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Canned:
        if method == "GET":
            return super()._answer(method, path, headers, body)
        return self.answer(json.loads(body))


def _schema(req: dict[str, Any]) -> dict[str, Any] | None:
    form = req.get("response_format") or {}
    return form.get("schema") or (form.get("json_schema") or {}).get("schema")


def _tool_reply(name: str, arguments: str) -> Canned:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return _reply({"content": None, "tool_calls": [call]}, "tool_calls")


def _reply(message: dict[str, Any], finish: str = "stop", logprobs: Any = None) -> Canned:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", **message},
                              "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return Canned(body=json.dumps({"choices": [choice], "usage": {"completion_tokens": 4}},
                                  ensure_ascii=False).encode())


def honest(req: dict[str, Any], free: str = f"Answer: {ANSWER}",
           constrained: Callable[[], Canned] = lambda: completion(ANSWER),
           tool: str | None = None, canary_tool: str | None = None) -> Canned:
    """The canary's value (both ways), then the item's answers: `free` text, the
    `constrained` reply, and a call to `tool`; `canary_tool` is the function the tool
    canary's call names (each the function offered when None)."""
    schema = _schema(req)
    if "tools" in req:
        offered = req["tools"][0]["function"]["name"]
        if offered == CANARY_TOOL:
            return _tool_reply(canary_tool or offered, json.dumps(CANARY_EXPECTED))
        return _tool_reply(tool or offered, ANSWER)
    if schema is not None and "canary" in schema.get("properties", {}):
        return completion(json.dumps(CANARY_EXPECTED))
    return constrained() if schema is not None else completion(free)


def _run(answer: Answer, *extra: str, url: Callable[[str], str] = str,
         key: bool = True) -> Callable[[Path, contextlib.ExitStack], list[str]]:
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        srv = stack.enter_context(Scripted(answer))
        return ["task=gsm8k", "mode=live", "n=1", "backend=openai",
                f"backend.base_url='{url(srv.base_url)}'", "backend.model=m",
                "backend.dialect=llama_cpp_python", "backend.max_retries=0", *CAPS,
                *(["backend.api_key_env=VBW_HOSTILE_KEY"] if key else []),
                f"hydra.run.dir={folder}/o", *extra]
    return make


def _userinfo(url: str) -> str:
    return url.replace("http://", f"http://{USERINFO}@")


def _query(url: str) -> str:
    return f"{url}?api-version=1&" + "&".join(f"{k}={v}" for k, v in QUERY.items())


def _basic_quoted(req: dict[str, Any]) -> Canned:
    """A 400 for every schema but the canary's, quoting the Basic token without its scheme."""
    return honest(req, constrained=lambda: error(
        400, f"credentials {BASIC} may not use response_format with this schema"))


def _logprob_steps() -> list[dict[str, Any]]:
    """`{"answer": 7}` in two tokens; at the second the server's top token is the key."""
    return [{"token": '{"answer": ', "logprob": -0.1,
             "top_logprobs": [{"token": '{"answer": ', "logprob": -0.1}]},
            {"token": "7}", "logprob": -2.5, "top_logprobs": [{"token": KEY, "logprob": -0.3}]}]


def _in_free_text(shown: str) -> Answer:
    return lambda req: honest(req, free=f"Answer: {ANSWER} (my key is {shown})")


def _sweep(folder: Path, stack: contextlib.ExitStack) -> list[str]:
    """Two jobs, the second failing (HTTP 401 quoting the URL's secrets): multirun.yaml,
    each job's status, the summary and the error line all hold the base URL."""
    quoted = " ".join(f"{k}={v}" for k, v in QUERY.items())
    srv = stack.enter_context(Scripted(
        lambda req: error(401, f"denied: {quoted}") if req["model"] == "fail" else honest(req)))
    return ["-m", "task=gsm8k", "mode=live", "n=1", "backend=openai",
            f"backend.base_url='{_query(_userinfo(srv.base_url))}'", "backend.model=m,fail",
            "backend.dialect=llama_cpp_python", "backend.max_retries=0", *CAPS,
            f"hydra.sweep.dir={folder}/s"]


SECRET_QUERY = (*QUERY.values(), PASSWORD, BASIC)
CASES = [
    Case(CLS, "the Basic token quoted back in a 400 (unsupported_schema, stderr)",
         _run(_basic_quoted, url=_userinfo, key=False), rc=2, lines=2, seconds=60,
         secrets=(BASIC, PASSWORD, BASIC[:12], BASIC[-12:])),
    Case(CLS, "the key as the tool name the canary is called with (printed)",
         _run(lambda req: honest(req, canary_tool=KEY), "arms=tools"), rc=2, seconds=60, env=ENV,
         secrets=(KEY, *HALVES)),
    Case(CLS, "the key as the tool name an item is called with (tool.called)",
         _run(lambda req: honest(req, tool=KEY), "arms=tools"),
         rc=0, lines=1, seconds=60, env=ENV, secrets=(KEY, *HALVES)),
    Case(CLS, "the key as a log-probability alternative (interventions[].wanted)",
         _run(lambda req: honest(req, constrained=lambda: _reply(
             {"content": ANSWER}, logprobs=_logprob_steps()))),
         rc=0, lines=1, seconds=60, env=ENV, secrets=(KEY, *HALVES)),
    Case(CLS, "the key split by a line break in a completion",
         _run(_in_free_text(f"{HALVES[0]}\n{HALVES[1]}")), rc=0, lines=1, seconds=60, env=ENV,
         secrets=(KEY, *HALVES)),
    Case(CLS, "the key with zero-width spaces inside in a completion",
         _run(_in_free_text(f"{KEY[:5]}\u200b{KEY[5:14]}\u200b{KEY[14:]}")),
         rc=0, lines=1, seconds=60, env=ENV, secrets=(KEY, KEY[5:14], KEY[14:])),
    Case(CLS, "the key URL-encoded in a completion",
         _run(_in_free_text(quote(KEY, safe=""))), rc=0, lines=1, seconds=60, env=ENV,
         secrets=(KEY, quote(KEY, safe=""), *HALVES)),
    Case(CLS, "?code= ?pass= ?jwt= in backend.base_url (run files, header, report)",
         _run(honest, url=_query, key=False), rc=0, lines=1, seconds=60,
         secrets=tuple(QUERY.values())),
    Case(CLS, "?code= ?pass= ?jwt= and a password in a sweep's base URL (-m, a job fails)",
         _sweep, rc=2, lines=2, seconds=90, secrets=SECRET_QUERY),
]
