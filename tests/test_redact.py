"""The one redaction module every writer uses (vbw.redact): URL credentials and key-like
query values, Authorization/Bearer/Basic tokens, known secrets also when a line break
splits them, before any cut; lone surrogates escaped losslessly; all in linear time."""

from __future__ import annotations

import json
import time

import pytest

from tests.generate.standin import StandIn, error
from tests.generate.test_server import ask, backend
from vbw.errors import EngineError
from vbw.redact import (Secret, escape_surrogates, mask_exact, redact, redact_obj,
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


def test_mask_exact_masks_long_secrets_only() -> None:
    assert mask_exact(f"k={KEY}!", [Secret(KEY)]) == ("k=***!", True)
    assert mask_exact("the user ann", [Secret("ann")]) == ("the user ann", False)


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
