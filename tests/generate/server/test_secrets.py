"""Credentials in what a server sends back (vbw.generate.server, `_masked`): the API key,
the URL's userinfo, password and secret query values are masked in every string of a
reply (text, tool names and arguments, log-probability alternatives, the finish reason)
in every form vbw.redact knows, and in every message quoting the server. Against the
scripted stand-in (tests/generate/standin.py)."""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any
from urllib.parse import quote

import pytest

from tests.generate.standin import Canned, StandIn, completion, error
from tests.generate.server.test_client import ask, backend
from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.backend import GenerateConfig, Tool

KEY = "sk-live/7Qz+8c1d9e2f"
ENV = {"VBW_KEY": KEY}
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}

FORMS = {"as is": KEY, "split by a line break": KEY[:6] + "\n" + KEY[6:],
         "a zero-width space inside": KEY[:4] + "\u200b" + KEY[4:],
         "url-encoded": quote(KEY, safe=""), "base64": b64encode(KEY.encode()).decode()}


def _keyed(url: str, **settings: Any):
    return backend(url, env=ENV, api_key_env="VBW_KEY", stream=False, **settings)


def _reply(message: dict[str, Any], finish: str = "stop", logprobs: Any = None) -> Canned:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", **message},
                              "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return Canned(body=json.dumps({"choices": [choice],
                                   "usage": {"completion_tokens": 2}}).encode())


@pytest.mark.parametrize("form", list(FORMS))
def test_the_key_in_a_completion_is_masked_in_any_form(form: str) -> None:
    with StandIn([completion(f"the key: {FORMS[form]}!")]) as srv:
        gen = ask(_keyed(srv.base_url), "hi")
    assert (gen.text, gen.redacted) == ("the key: ***!", True)


def test_the_key_as_a_tool_name_is_masked_in_called_and_the_message() -> None:
    call = {"id": "c1", "type": "function",
            "function": {"name": KEY, "arguments": json.dumps({"a": FORMS["url-encoded"]})}}
    with StandIn([_reply({"content": None, "tool_calls": [call]}, "tool_calls")]) as srv:
        gen = _keyed(srv.base_url).generate(
            [{"role": "user", "content": "hi"}],
            GenerateConfig(max_tokens=8, schema=SCHEMA, tool=Tool(name="f", description="d")))
    assert gen.called == ["***"] and gen.redacted is True and gen.text == ""
    assert KEY not in json.dumps(gen.message) and "***" in json.dumps(gen.message)
    assert FORMS["url-encoded"] not in json.dumps(gen.message)


def test_the_key_as_a_log_probability_alternative_is_masked_and_the_step_kept() -> None:
    steps = [{"token": '{"a":', "logprob": -0.1, "top_logprobs": [{"token": '{"a":',
                                                                   "logprob": -0.1}]},
             {"token": "1}", "logprob": -3.0, "top_logprobs": [{"token": KEY, "logprob": -0.2}]}]
    with StandIn([_reply({"content": '{"a":1}'}, logprobs=steps)]) as srv:
        gen = ask(_keyed(srv.base_url), "hi", schema=SCHEMA)
    assert gen.text == '{"a":1}' and gen.redacted is True
    (step,) = gen.interventions
    assert (step.pos, step.char, step.wanted, step.forced) == (1, 5, "***", "1}")


def test_a_key_split_across_tokens_records_no_interventions() -> None:
    """The masked text no longer joins up from the tokens: no step is trusted."""
    steps = [{"token": t, "logprob": -0.1, "top_logprobs": [{"token": t, "logprob": -0.1}]}
             for t in ('"', KEY[:5], KEY[5:], '"')]
    with StandIn([_reply({"content": f'"{KEY}"'}, logprobs=steps)]) as srv:
        gen = ask(_keyed(srv.base_url), "hi", schema=SCHEMA)
    assert (gen.text, gen.redacted, gen.interventions) == ('"***"', True, None)


def test_the_key_as_a_finish_reason_is_not_quoted() -> None:
    with StandIn([completion("x", finish=KEY)]) as srv:
        with pytest.raises(EngineError, match=r"finish_reason '\*\*\*' is neither") as info:
            ask(_keyed(srv.base_url), "hi")
    assert KEY not in str(info.value)


def test_the_basic_token_quoted_alone_in_a_400_is_masked() -> None:
    """The server quotes the token of `Authorization: Basic <token>` without its scheme."""
    userinfo = "ann:pw-S3CRET-4471"
    token = b64encode(userinfo.encode()).decode()
    url_of = lambda srv: srv.base_url.replace("http://", f"http://{userinfo}@")  # noqa: E731
    for message in (f"credentials {token} not allowed with this schema",
                    f"token {token[:9]}\n{token[9:]} refused", f"Basic {token.lower()} ok?"):
        with StandIn([error(400, message)]) as srv:
            with pytest.raises(UnsupportedSchema) as info:
                ask(backend(url_of(srv), stream=False), "hi", schema=SCHEMA)
        assert srv.posts[0]["headers"]["Authorization"] == f"Basic {token}"
        shown = str(info.value)
        assert token[:12] not in shown and token[-12:].lower() not in shown.lower(), shown
        assert "pw-S3CRET" not in shown


def test_the_key_in_a_nested_error_detail_quoted_as_json_is_masked() -> None:
    """FastAPI-style `detail` objects are quoted as JSON: the key split by a line break or
    a zero-width space there reads `\\n`, `\\u200b`."""
    detail = {"detail": [{"msg": "bad header", "input": {
        "authorization": f"Bearer {KEY[:6]}\n{KEY[6:]}", "x": f"{KEY[:4]}\u200b{KEY[4:]}é"}}]}
    with StandIn([Canned(422, json.dumps(detail).encode())]) as srv:
        with pytest.raises(UnsupportedSchema) as info:
            ask(_keyed(srv.base_url), "hi", schema=SCHEMA)
    shown = str(info.value)
    assert '"x": "***\\u00e9"' in shown  # quoted as JSON, escapes and all
    assert KEY[:6] not in shown and KEY[6:] not in shown and KEY[4:] not in shown, shown


@pytest.mark.parametrize("name", ["code", "pass", "jwt", "Session", "X-Amz-Signature", "%63ode"])
def test_a_secret_query_value_is_sent_never_shown_and_masked_in_replies(name: str) -> None:
    value = "Q-9f8e7d6c5b4a"
    with StandIn([completion(f"echo {quote(value)}"), error(401, f"bad {name}={value}")]) as srv:
        b = backend(f"{srv.base_url}?api-version=1&{name}={value}", stream=False)
        gen = ask(b, "hi")
        with pytest.raises(EngineError) as info:
            ask(b, "hi")
    assert f"{name}={value}" in srv.posts[0]["path"]  # sent as given
    assert (gen.text, gen.redacted) == ("echo ***", True)
    assert value not in str(info.value) and value not in json.dumps(b.describe())
    assert "api-version=1" in str(info.value)
