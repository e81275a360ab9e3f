"""The whole-request deadline and the reply size cap (vbw.generate.transport), against a
hostile server on 127.0.0.1 (tests/generate/hostile.py) that drips, stalls or floods in
every phase of the exchange. Each test is bounded in time: it asserts the backend gave up
within the deadline plus a margin, with one line naming the setting."""

from __future__ import annotations

import json

import pytest

from tests.generate.hostile import Hostile, drip, elapsed, flood, headers
from tests.generate.server.test_client import ask, backend
from vbw.errors import EngineError

DEADLINE = 1.0
MARGIN = 4.0  # thread start-up, the one retry's backoff, a busy shared machine
SSE = "text/event-stream"


def _times_out(answer, **settings) -> EngineError:
    with Hostile(answer) as srv:
        b = backend(srv.base_url, timeout=DEADLINE, max_retries=0, **settings)
        seconds, out = elapsed(lambda: ask(b, "hi"))
    assert isinstance(out, EngineError), out
    assert seconds < DEADLINE + MARGIN, seconds
    msg = str(out)
    assert "\n" not in msg
    assert f"no complete reply within backend.timeout={DEADLINE:g} s" in msg, msg
    return out


def test_sse_pings_forever_hit_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: drip(c, headers(content_type=SSE), b": ping\n\n",
                                             0.1, stop))


def test_an_unterminated_data_line_hits_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: drip(c, headers(content_type=SSE) + b'data: {"ch',
                                             b"x", 0.1, stop))


def test_a_json_body_dripping_one_space_at_a_time_hits_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: drip(c, headers(length=10_000) + b"{", b" ", 0.1, stop),
               stream=False)


def test_dripping_headers_hit_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: drip(c, b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a", 0.1, stop))


def test_a_silent_server_hits_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: stop.wait(10))


def test_a_dripping_error_body_hits_the_deadline() -> None:
    _times_out(lambda c, m, p, b, stop: drip(c, headers(503, length=10_000) + b"{", b" ",
                                             0.1, stop))


def test_the_deadline_is_retried_like_a_dropped_connection(monkeypatch) -> None:
    monkeypatch.setattr("vbw.generate.retry.Retrying.BACKOFF_BASE", 0.01)
    with Hostile(lambda c, m, p, b, stop: stop.wait(10)) as srv:
        b = backend(srv.base_url, timeout=0.5, max_retries=1)
        seconds, out = elapsed(lambda: ask(b, "hi"))
        posts = [r for r in srv.requests if r[0] == "POST"]
    assert isinstance(out, EngineError) and "failed after 2 attempts" in str(out)
    assert len(posts) == 2 and seconds < 1.0 + MARGIN


def test_a_dripping_probe_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr("vbw.generate.probe.PROBE_TIMEOUT", 0.5)
    with Hostile(lambda c, m, p, b, stop: drip(c, headers(length=10_000) + b"{", b" ", 0.05,
                                               stop)) as srv:
        b = backend(srv.base_url)
        seconds, described = elapsed(b.describe)
        gets = [r for r in srv.requests if r[0] == "GET"]
    assert isinstance(described, dict) and described["server"] == {}
    assert len(gets) == 5  # every probe was tried, each cut at its deadline
    assert seconds < 5 * 0.5 + MARGIN, seconds


def _too_large(answer, cap: int, **settings) -> None:
    with Hostile(answer) as srv:
        b = backend(srv.base_url, max_reply_bytes=cap, max_retries=3, **settings)
        seconds, out = elapsed(lambda: ask(b, "hi"))
        posts = [r for r in srv.requests if r[0] == "POST"]
    assert isinstance(out, EngineError), out
    assert f"the reply exceeds {cap} bytes" in str(out)
    assert str(out).endswith("; not recorded (backend.max_reply_bytes)"), out
    assert len(posts) == 1  # not retried: the same request would get the same reply
    assert seconds < 10, seconds


def test_a_flooding_server_stops_at_the_cap() -> None:
    _too_large(lambda c, m, p, b, stop: flood(c, headers(content_type=SSE), b": x" * 20_000
                                              + b"\n", stop), cap=1 << 20)
    _too_large(lambda c, m, p, b, stop: flood(c, headers() + b'{"a": "', b"x" * 65536, stop),
               cap=1 << 20, stream=False)


def test_the_default_cap_bounds_an_unterminated_flood() -> None:
    _too_large(lambda c, m, p, b, stop: flood(c, headers(content_type=SSE) + b"data: ",
                                              b"x" * 65536, stop, limit=64 << 20),
               cap=16 * 1024 * 1024)


def test_a_valid_reply_over_the_cap_is_not_recorded() -> None:
    big = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"content": "x" * (2 << 20)}}]}).encode()
    _too_large(lambda c, m, p, b, stop: c.sendall(headers(length=len(big)) + big),
               cap=1 << 20, stream=False)
    # the same reply under a cap above it is recorded whole
    with Hostile(lambda c, m, p, b, stop: c.sendall(headers(length=len(big)) + big)) as srv:
        gen = ask(backend(srv.base_url, max_reply_bytes=4 << 20, stream=False), "hi")
    assert len(gen.text) == 2 << 20


def _body_of(size: int, sse: bool) -> bytes:
    """A complete reply ("ok", finish_reason stop) of exactly `size` bytes: JSON padded
    with trailing spaces, or a stream padded with a comment line."""
    if sse:
        events = (b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, '
                  b'"finish_reason": "stop"}]}\n\ndata: [DONE]\n\n')
        return b": " + b"x" * (size - len(events) - 3) + b"\n" + events
    obj = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"content": "ok"}}]}).encode()
    return obj + b" " * (size - len(obj))


@pytest.mark.parametrize("framing", ["content-length", "until-close", "stream"])
def test_a_reply_of_exactly_the_cap_is_kept_and_one_byte_more_is_not(framing) -> None:
    """The cap is the largest reply recorded: the Content-Length check, the count of a
    body read to the close and the count of a stream each let `max_reply_bytes` through
    and refuse one byte more."""
    cap, sse = 4096, framing == "stream"
    kind = SSE if sse else "application/json"

    def answer(size: int):
        body = _body_of(size, sse)
        assert len(body) == size
        head = headers(content_type=kind, length=size if framing == "content-length" else None)
        return lambda c, m, p, b, stop: c.sendall(head + body)

    with Hostile(answer(cap)) as srv:
        gen = ask(backend(srv.base_url, max_reply_bytes=cap, max_retries=0, stream=sse), "hi")
    assert (gen.text, gen.finish_reason) == ("ok", "stop")
    _too_large(answer(cap + 1), cap=cap, stream=sse)


def test_a_reply_under_the_deadline_but_streamed_slowly_is_kept() -> None:
    """The deadline is the whole exchange, not a stall detector: a slow honest stream
    that finishes in time is recorded."""
    chunks = [b'data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}\n\n'] * 3 + \
        [b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n',
         b"data: [DONE]\n\n"]

    def answer(c, m, p, b, stop) -> None:
        c.sendall(headers(content_type=SSE))
        for part in chunks:
            stop.wait(0.1)
            c.sendall(part)

    with Hostile(answer) as srv:
        gen = ask(backend(srv.base_url, timeout=3.0), "hi")
    assert (gen.text, gen.finish_reason, gen.n_tokens) == ("aaa", "stop", 3)


@pytest.mark.parametrize("cap", [0, 1023])
def test_the_cap_has_a_floor(cap) -> None:
    with pytest.raises(Exception, match="max_reply_bytes"):
        backend("http://127.0.0.1:1/v1", max_reply_bytes=cap)


def test_a_hanging_request_ends_the_run_unrecorded_and_resume_continues(tmp_path) -> None:
    """Whole CLI runs: the second item's requests hang (the server drips SSE pings); the
    run stops at the deadline with one line, exit 2, the first item kept; once the server
    behaves, resume=true generates the rest."""
    from tests.conftest import run_vbw
    from vbw.generate.backend import GenerateConfig
    from tests.generate.scripted import echo_script

    state = {"hang": True}
    second = "A robe takes 2 bolts of blue fiber"  # gsm8k_test_1's question

    def answer(c, m, p, body, stop) -> None:
        if m == "GET":  # the header's probes
            c.sendall(headers(404, length=0))
            return
        req = json.loads(body)
        schema = (req.get("response_format") or {}).get("schema")
        if state["hang"] and second in json.dumps(req["messages"]):
            drip(c, headers(content_type=SSE), b": ping\n\n", 0.2, stop)
            return
        text = echo_script(req["messages"], GenerateConfig(max_tokens=8, schema=schema))
        reply = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"content": text}}]}).encode()
        c.sendall(headers(length=len(reply)) + reply)

    with Hostile(answer) as srv:
        args = ["task=gsm8k", "mode=live", "n=2", "backend=openai",
                f"backend.base_url={srv.base_url}", "backend.model=m",
                "backend.dialect=llama_cpp_python", "backend.timeout=1", "backend.max_retries=0",
                f"hydra.run.dir={tmp_path}/o", f"replay={tmp_path}/r.jsonl"]
        stopped = run_vbw(*args, cwd=tmp_path, timeout=120)
        kept = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
        state["hang"] = False
        resumed = run_vbw(*args, "resume=true", cwd=tmp_path, timeout=120)
    assert stopped.returncode == 2, stopped.stderr
    [line] = [x for x in stopped.stderr.splitlines() if x.startswith("vbw: error:")]
    assert "Traceback" not in stopped.stderr
    assert "no complete reply within backend.timeout=1 s" in line and "resume=true" in line
    assert [r["id"] for r in kept if "id" in r] == ["gsm8k_test_0"]
    assert resumed.returncode == 0, resumed.stderr
    done = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["id"] for r in done if "id" in r] == ["gsm8k_test_0", "gsm8k_test_1"]
