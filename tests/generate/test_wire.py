"""Malformed replies (vbw.generate.wire): every shape a server can get wrong is one
EngineError line naming the field and what it should be (exit 2), never an AttributeError
or TypeError (exit 3); token counts are non-negative integers or unknown; model text with
a lone surrogate or the API key is kept losslessly or masked."""

from __future__ import annotations

import json

import pytest

from tests.generate.standin import Canned, StandIn, chunk, completion, stream
from tests.generate.server.test_client import SECRET, ask, backend
from vbw.errors import EngineError
from vbw.generate.wire import Malformed, parse_completion, token_count


def _reply(content, **extra) -> Canned:
    obj = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop"}], **extra}
    return Canned(body=json.dumps(obj).encode())


BAD_STREAMS = [
    ([{"choices": [{"index": 0, "delta": "abc"}]}], "choices[0].delta: expected an object, "
                                                    "got a string"),
    ([{"choices": {"index": 0}}], "choices: expected an array, got an object"),
    ([{"choices": [["abc"]]}], "choices[0]: expected an object, got an array"),
    ([chunk(), {"choices": [{"index": 0, "delta": {"content": 7}}]}],
     "choices[0].delta.content: expected a string or null, got the number 7"),
    ([{"choices": [{"index": "0", "delta": {}}]}], "choices[0].index: expected an integer"),
    ([{"choices": [{"index": 0, "delta": {}, "finish_reason": 1}]}],
     "choices[0].finish_reason: expected a string or null"),
    (["[1, 2]"], "a stream chunk: expected an object, got an array"),
]


@pytest.mark.parametrize("events,expected", BAD_STREAMS)
def test_malformed_stream_chunks_name_the_field(events, expected) -> None:
    with StandIn([stream(events)]) as srv:
        with pytest.raises(EngineError) as info:
            ask(backend(srv.base_url), "hi")
    msg = str(info.value)
    assert "the reply is not a chat completion: " in msg and expected in msg, msg
    assert "\n" not in msg
    assert len(srv.posts) == 1  # not retried: the server answered, wrongly


BAD_BODIES = [
    (_reply(5), "choices[0].message.content: expected a string or null, got the number 5"),
    (_reply({"text": "x"}), "choices[0].message.content: expected a string or null, got an "
                            "object"),
    (Canned(body=b'{"choices": []}'), "choices: expected a non-empty array, got an empty array"),
    (Canned(body=b'{"choices": [{"message": "hi"}]}'), "choices[0].message: expected an object"),
    (Canned(body=b"[]"), "the reply: expected an object, got an array"),
    (Canned(body=b'{"choices": "x"}'), "choices: expected a non-empty array, got a string"),
]


@pytest.mark.parametrize("canned,expected", BAD_BODIES)
def test_malformed_bodies_name_the_field(canned, expected) -> None:
    with StandIn([canned]) as srv:
        with pytest.raises(EngineError) as info:
            ask(backend(srv.base_url, stream=False), "hi")
    assert expected in str(info.value), info.value


@pytest.mark.parametrize("value,expected", [(3, 3), (0, 0), (True, None), (False, None),
                                            (-1, None), (2.0, None), ("3", None), (None, None)])
def test_token_counts_are_non_negative_integers_or_unknown(value, expected) -> None:
    assert token_count(value) == expected
    reply = parse_completion({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
                              "usage": {"completion_tokens": value}})
    assert reply.completion_tokens == expected


def test_a_bogus_count_is_recorded_as_unknown() -> None:
    with StandIn([_reply("ok", usage={"completion_tokens": True}),
                  _reply("ok", usage={"completion_tokens": -4})]) as srv:
        b = backend(srv.base_url, stream=False)
        assert [ask(b, "hi").n_tokens, ask(b, "hi").n_tokens] == [None, None]


def test_a_bogus_streamed_count_falls_back_to_the_chunks() -> None:
    events = [chunk("a"), chunk("b"), chunk(finish="stop"),
              {"choices": [], "usage": {"completion_tokens": True}}]
    with StandIn([stream(events)]) as srv:
        assert ask(backend(srv.base_url), "hi").n_tokens == 2


def test_a_lone_surrogate_is_kept() -> None:
    with StandIn([_reply("a\ud800b"), stream([chunk("\udfff"), chunk(finish="stop")])]) as srv:
        b = backend(srv.base_url)
        assert ask(b, "hi").text == "a\ud800b"  # the server ignored stream=true
        assert ask(b, "hi").text == "\udfff"


def test_the_api_key_echoed_in_a_completion_is_masked() -> None:
    with StandIn([completion(f"your key is {SECRET}."), completion("nothing to hide")]) as srv:
        b = backend(srv.base_url, env={"K": SECRET}, api_key_env="K", stream=False)
        echoed, plain = ask(b, "hi"), ask(b, "hi")
    assert (echoed.text, echoed.redacted) == ("your key is ***.", True)
    assert (plain.text, plain.redacted) == ("nothing to hide", False)


def test_malformed_is_a_value_error() -> None:
    """The backend turns ValueError (JSON, UTF-8, shape) into one EngineError line."""
    assert issubclass(Malformed, ValueError)


def test_a_run_records_and_reports_a_lone_surrogate(tmp_path) -> None:
    """A whole CLI run whose free-text answers end in a lone surrogate: exit 0, the replay
    holds it as the JSON escape (valid UTF-8), and re-scoring and the reports work."""
    from tests.conftest import run_vbw
    from tests.generate.standin import EchoServer

    with EchoServer(leak="odd \ud800") as srv:
        proc = run_vbw("task=gsm8k", "mode=live", "n=2", "backend=openai",
                       f"backend.base_url={srv.base_url}", "backend.model=m",
                       "backend.dialect=llama_cpp_python", f"hydra.run.dir={tmp_path}/o",
                       cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    raw = (tmp_path / "o/replay.jsonl").read_bytes()
    raw.decode("utf-8")
    assert b"odd \\ud800" in raw
    texts = [a["text"] for line in raw.decode().splitlines() if '"id"' in line
             for a in json.loads(line)["arms"].values()]
    assert any(t.endswith("odd \ud800") for t in texts)
    for name in ("report.json", "report.html", "report.md"):
        (tmp_path / "o" / name).read_text(encoding="utf-8")
    again = run_vbw("task=gsm8k", f"replay={tmp_path}/o/replay.jsonl",
                    f"hydra.run.dir={tmp_path}/re", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_a_quoted_server_text_holds_no_lone_surrogate() -> None:
    """What vbw quotes of a server (an error message, a probe's field) is written into
    replay headers, unsupported-schema reasons and errors: a lone surrogate in it becomes
    its escape, so the text encodes as UTF-8."""
    from vbw.generate.wire import one_line_text

    shown = one_line_text("bad \ud800\n schema \udfff")
    assert shown == "bad \\ud800 schema \\udfff"
    shown.encode("utf-8")
