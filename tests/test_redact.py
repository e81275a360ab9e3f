"""The one redaction module every writer uses (vbw.redact): URL credentials and secret
query values (SECRET_PARAMS), Authorization/Bearer/Basic tokens, known secrets in every
form (as is, base64, URL-encoded, split by a line break or an invisible character), before
any cut; lone surrogates escaped losslessly; all in linear time."""

from __future__ import annotations

import json
import time
from base64 import b64encode, urlsafe_b64encode
from urllib.parse import quote, quote_plus

import pytest

from tests.generate.standin import StandIn, error
from tests.generate.server.test_client import ask, backend
from vbw.errors import EngineError
from vbw.generate.wire import parse_base_url
from vbw.redact import (INVISIBLE, MIN_SECRET, MIN_TEXT_SECRET, SECRET_PARAMS, Secret,
                        escape_surrogates, mask_json, mask_text, redact, redact_obj,
                        redact_text)

KEY = "sk-live-0123456789abcdef0123"


@pytest.mark.parametrize("text,expected", [
    ("backend.base_url=http://ann:pw-123@h.example/v1?api-key=XYZ123&api-version=2024",
     "backend.base_url=http://***@h.example/v1?api-key=***&api-version=2024"),
    ("https://h/v1?token=t0k&sig=abc;password=p&x=1",
     "https://h/v1?token=***&sig=***;password=***&x=1"),
    ("http://u:p@ss@host:8/v1", "http://***@host:8/v1"),
    ("see https://h/v1?access_token=a&client_secret=b",
     "see https://h/v1?access_token=***&client_secret=***"),
    ("- backend.base_url=http://user:pass@127.0.0.1:1/v1?key=K",
     "- backend.base_url=http://***@127.0.0.1:1/v1?key=***"),
    ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
    ('{"authorization": "Basic dXNlcjpwYXNz"}', '{"authorization": "Basic ***"}'),
    ("got Bearer sk-live-123 from you", "got Bearer *** from you"),
    ("header Basic dXNlcjpwYXNzd29yZA== was wrong", "header Basic *** was wrong"),
])
def test_credentials_in_text_are_masked(text, expected) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", [
    "Basic authentication is required", "bearer tokens expire", "http://host/v1?model=x&n=2",
    "max_tokens=40 is fine", "a://b c", "email me at a@b.c",
])
def test_ordinary_text_is_left_alone(text) -> None:
    assert redact_text(text) == text


def test_known_secrets_are_found_split_by_whitespace_and_before_a_cut() -> None:
    split = f"bad key {KEY[:10]}\n{KEY[10:]} given"
    assert redact(split, [Secret(KEY)]) == "bad key *** given"
    assert redact("short abc", [Secret("abc")]) == "short abc"  # under MIN_SECRET


def test_a_long_server_message_is_redacted_before_it_is_cut() -> None:
    """The key sits past the 300 characters quoted: no prefix of it may be printed."""
    for message in ("x" * 280 + f" key {KEY} rejected", "x" * 100 + f" {KEY[:9]}\n{KEY[9:]}",
                    "y" * 290 + " Authorization: Basic dXNlcjpwYXNzd29yZA=="):
        with StandIn([error(401, message)]) as srv:
            with pytest.raises(EngineError) as info:
                ask(backend(srv.base_url, env={"K": KEY}, api_key_env="K"), "hi")
        msg = str(info.value)
        assert "\n" not in msg
        for n in range(6, len(KEY)):
            assert KEY[:n] not in msg and KEY[-n:] not in msg, msg
        assert "dXNlcjpw" not in msg


def test_mask_text_masks_long_secrets_only() -> None:
    assert mask_text(f"k={KEY}!", [Secret(KEY)]) == ("k=***!", True)
    assert mask_text("the user ann", [Secret("ann")]) == ("the user ann", False)
    at = "x" * MIN_TEXT_SECRET
    assert mask_text(f"<{at}>", [Secret(at)]) == ("<***>", True)  # the boundary itself
    assert mask_text(f"<{at[1:]}>", [Secret(at[1:])]) == (f"<{at[1:]}>", False)
    assert redact(f"<{at[:MIN_SECRET]}>", [Secret(at[:MIN_SECRET])]) == "<***>"


ODD = "sk-live/0123+ab=cd é"  # characters that percent-encoding and base64 change


def _forms(value: str) -> dict[str, str]:
    raw = value.encode()
    return {"as is": value, "base64": b64encode(raw).decode(),
            "base64, no padding": b64encode(raw).decode().rstrip("="),
            "url-safe base64": urlsafe_b64encode(raw).decode(),
            "percent-encoded": quote(value, safe=""),
            "lower-case hex": quote(value, safe="").lower(),
            "form-encoded (+)": quote_plus(value),
            "line break": value[:5] + "\r\n  " + value[5:],
            "JSON-escaped line break": json.dumps(value[:5] + "\n" + value[5:])[1:-1],
            "JSON-escaped U+200B": json.dumps(value[:5] + "\u200b" + value[5:])[1:-1],
            **{f"U+{ord(c):04X} inside": value[:3] + c + value[3:9] + c + value[9:]
               for c in INVISIBLE}}


@pytest.mark.parametrize("form", list(_forms(ODD)))
def test_a_known_secret_is_masked_in_every_form(form: str) -> None:
    shown = _forms(ODD)[form]
    text, found = mask_text(f"said [{shown}] twice: [{shown}]", [Secret(ODD)])
    assert found and text == "said [***] twice: [***]", text
    assert redact(f"bad key {shown}", [Secret(ODD)]) == "bad key ***"


def test_a_url_encoded_secret_is_masked_decoded_too() -> None:
    """A password written percent-encoded in the URL is sent (and quoted) decoded."""
    assert mask_text("got p@ss:w0rd/x", [Secret("p%40ss%3Aw0rd%2Fx")]) == ("got ***", True)


def test_the_basic_token_of_the_userinfo_is_masked_without_its_scheme() -> None:
    token = b64encode(b"ann:pw-S3CRET-4471").decode()
    quoted = f'{{"detail": "credentials {token} are not valid for this schema"}}'
    assert token not in redact(quoted, [Secret("ann:pw-S3CRET-4471")])


def test_mask_json_masks_every_string_and_key_in_place_without_recursion() -> None:
    deep: list = [KEY]
    for _ in range(50_000):  # far past the recursion limit
        deep = [deep]
    obj = {"tool_calls": [{"function": {"name": KEY, "arguments": {KEY: 1}}}],
           "top": [{"token": KEY[:9] + "\u200b" + KEY[9:], "logprob": -0.1}], "deep": deep,
           "n": 3, "none": None}
    got, found = mask_json(obj, [Secret(KEY)])
    assert found and got is obj
    assert got["tool_calls"][0]["function"] == {"name": "***", "arguments": {"***": 1}}
    assert got["top"][0]["token"] == "***" and got["n"] == 3
    inner = got["deep"]
    while isinstance(inner, list) and inner and isinstance(inner[0], list):
        inner = inner[0]
    assert inner == ["***"]
    assert mask_json(KEY, [Secret(KEY)]) == ("***", True)
    assert mask_json({"a": "plain"}, [Secret(KEY)]) == ({"a": "plain"}, False)


@pytest.mark.parametrize("name", [*SECRET_PARAMS, "X-Amz-Signature", "CODE", "Pass",
                                  "refresh_token", "x-api-key", "%63ode", "j%77t", "pa\u200bss",
                                  "api+key"])
def test_every_listed_query_parameter_is_a_secret(name: str) -> None:
    assert redact_text(f"http://h/v1?a=1&{name}=V4LUE9&b=2") == f"http://h/v1?a=1&{name}=***&b=2"


@pytest.mark.parametrize("name", ["model", "api-version", "n", "temperature", "user"])
def test_other_query_parameters_are_kept(name: str) -> None:
    assert redact_text(f"http://h/v1?{name}=V4LUE9") == f"http://h/v1?{name}=V4LUE9"
    assert parse_base_url(f"http://h/v1?{name}=V4LUE9").shown() == f"http://h/v1?{name}=V4LUE9"


def test_the_listed_names_cover_the_issue_s_and_more() -> None:
    wanted = {"key", "api_key", "apikey", "token", "access_token", "auth", "password", "pass",
              "passwd", "pwd", "secret", "client_secret", "code", "jwt", "signature", "sig",
              "session"}
    assert wanted <= set(SECRET_PARAMS)


def test_redact_obj_walks_json() -> None:
    obj = {"overrides": ["backend.base_url=http://u:p@h/v1?api_key=K"], "n": 3,
           "config": {"backend": {"base_url": "http://u:p@h/v1"}}}
    assert json.dumps(redact_obj(obj)).count("***") == 3
    assert "u:p" not in json.dumps(redact_obj(obj))


def test_lone_surrogates_escape_losslessly() -> None:
    text = "a\ud800b\udc00"
    out = escape_surrogates(json.dumps({"t": text}, ensure_ascii=False))
    out.encode("utf-8")
    assert json.loads(out) == {"t": text}
    assert escape_surrogates("plain é") == "plain é"
    assert escape_surrogates("ascii") == "ascii"
    # a surrogate pair held as two code points is two surrogates to UTF-8: both escaped
    assert escape_surrogates("é\ud83d\ude00") == "é\\ud83d\\ude00"


@pytest.mark.parametrize("text", [
    "a.a." * 250_000, "://" * 300_000, "?a" * 400_000, "?a=" * 300_000,
    "Basic " * 150_000, "authorization:" * 60_000, "\ud800" * 300_000,
], ids=["dots", "schemes", "names", "params", "basic", "authorization", "surrogates"])
def test_linear_time_on_hostile_text(text) -> None:
    start = time.perf_counter()
    escape_surrogates(redact(text, [Secret(KEY)]))
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("text", [
    KEY[:-1] * 40_000, (KEY[:12] + "\u200b \n") * 60_000, "%73%6B%2D" * 100_000,
    (KEY[:12] + "\\n\\u200b\\u") * 60_000,
    "s" + " " * 1_000_000 + "k", b64encode(KEY.encode()).decode()[:-2] * 30_000,
], ids=["prefixes", "split prefixes", "percent", "escaped gaps", "one long gap",
        "base64 prefixes"])
def test_a_known_secret_s_forms_are_found_in_linear_time(text) -> None:
    start = time.perf_counter()
    mask_text(text, [Secret(KEY), Secret("Bearer " + KEY)])
    assert time.perf_counter() - start < 2.0
