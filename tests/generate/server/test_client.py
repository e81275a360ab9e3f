"""The OpenAI-compatible server backend. Generation is tested against the real
llama-cpp-python server on SmolLM2 (the `llama_server` fixture, tests marked live);
the protocol (retries, status codes, credentials, stream shapes) against a scripted
stand-in (tests/generate/standin.py), since a real server cannot be made to misbehave."""

from __future__ import annotations

import json
import logging
import threading
import time

import jsonschema
import pytest

from tests.generate.standin import (Canned, StandIn, chunk, completion, error, free_port,
                                    stream)
from vbw.config import OpenAIBackendConfig
from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.backend import GenerateConfig
from vbw.generate.canary import CANARY_EXPECTED, CANARY_MAX_TOKENS, CANARY_PROMPT, CANARY_SCHEMA
from vbw.generate.server.client import OpenAIServerBackend
from vbw.generate.wire import parse_base_url

live = pytest.mark.live
SECRET = "sk-vbw-test-5f1d2c9a"
HAIKU = [{"role": "user", "content": CANARY_PROMPT}]
CANARY = GenerateConfig(max_tokens=CANARY_MAX_TOKENS, schema=CANARY_SCHEMA)


def backend(base_url: str, model: str = "m", env: dict[str, str] | None = None,
            **settings: object) -> OpenAIServerBackend:
    cfg = OpenAIBackendConfig(name="openai", base_url=base_url, model=model,
                              **{"dialect": "llama_cpp_python", "max_retries": 2, **settings})
    return OpenAIServerBackend(cfg, seed=1234, env=env or {})


def ask(b: OpenAIServerBackend, prompt: str, max_tokens: int = 24, schema=None):
    return b.generate([{"role": "user", "content": prompt}],
                      GenerateConfig(max_tokens=max_tokens, schema=schema))


def is_canary(text: str) -> bool:
    try:
        return json.loads(text) == CANARY_EXPECTED
    except ValueError:
        return False


@pytest.fixture
def fast_backoff(monkeypatch):
    monkeypatch.setattr("vbw.generate.retry.Retrying.BACKOFF_BASE", 0.01)


# --- against the real llama-cpp-python server ------------------------------------------

@live
@pytest.mark.parametrize("stream_", [True, False])
def test_plain_generation(llama_server, stream_) -> None:
    gen = ask(backend(llama_server.base_url, llama_server.model, stream=stream_), "Say hello.")
    assert gen.text.strip() and gen.finish_reason in ("stop", "length")
    assert 0 < gen.n_tokens <= 24 and gen.seconds > 0
    assert (gen.ttft_seconds is not None and 0 < gen.ttft_seconds <= gen.seconds) == stream_


@live
def test_stream_and_plain_agree(llama_server) -> None:
    """Same greedy text either way; the stream's chunk count (no usage from this server)
    equals the plain reply's usage.completion_tokens. Both are asked after a first plain
    request, so both find the prompt in llama.cpp's cache: a prompt evaluated whole and one
    whose cached prefix is reused differ in the last bits of the logits, which flips a
    greedy token of SmolLM2 on some CPUs (seen on an AMD EPYC), stream or not."""
    ask(backend(llama_server.base_url, llama_server.model, stream=False), "Name three colours.",
        40)
    streamed = ask(backend(llama_server.base_url, llama_server.model), "Name three colours.", 40)
    plain = ask(backend(llama_server.base_url, llama_server.model, stream=False),
                "Name three colours.", 40)
    assert (streamed.text, streamed.n_tokens) == (plain.text, plain.n_tokens)


@live
def test_schema_in_llama_cpp_python_dialect_binds(llama_server) -> None:
    gen = backend(llama_server.base_url, llama_server.model).generate(HAIKU, CANARY)
    jsonschema.validate(json.loads(gen.text), CANARY_SCHEMA)
    assert is_canary(gen.text), gen.text


@live
@pytest.mark.parametrize("dialect", ["vllm", "llama_server"])
def test_dialects_this_server_ignores_yield_no_canary(llama_server, dialect) -> None:
    """The field is dropped without an error: the output is exactly the schema-less one,
    which is what the canary exists to catch."""
    b = backend(llama_server.base_url, llama_server.model, dialect=dialect)
    constrained = b.generate(HAIKU, CANARY)
    free = b.generate(HAIKU, GenerateConfig(max_tokens=CANARY_MAX_TOKENS))
    assert constrained.text == free.text
    assert not is_canary(constrained.text), constrained.text


@live
@pytest.mark.parametrize("dialect", ["openai", "ollama"])
def test_dialects_this_server_rejects(llama_server, dialect) -> None:
    """response_format.type json_schema fails its validation; it answers 500 (retried)."""
    b = backend(llama_server.base_url, llama_server.model, dialect=dialect, max_retries=0)
    with pytest.raises(EngineError, match=r"after 1 attempt: HTTP 500: .*'json_object'"):
        b.generate(HAIKU, CANARY)


@live
def test_greedy_is_deterministic_sequentially_and_concurrently(llama_server) -> None:
    b = backend(llama_server.base_url, llama_server.model, concurrency=2)
    prompts = ["What is 2 + 2?", "Name a fruit."]
    first = [ask(b, p).text for p in prompts]
    assert [ask(b, p).text for p in prompts] == first
    together: dict[int, str] = {}

    def run(i: int) -> None:
        together[i] = ask(b, prompts[i]).text

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert [together.get(i) for i in range(2)] == first


@live
def test_describe_real_server_strips_credentials(llama_server) -> None:
    url = llama_server.base_url.replace("http://", "http://user:pass@")
    b = backend(url, llama_server.model)
    info = b.describe()
    assert info["base_url"] == llama_server.base_url
    assert (info["model"], info["dialect"]) == (llama_server.model, "llama_cpp_python")
    assert info["server"]["http_server"] == "uvicorn"
    assert info["server"]["openapi"].endswith("llama.cpp Python API 0.3.36")
    assert info["server"]["owned_by"] == "me"
    assert "pass" not in json.dumps(info) + repr(b)
    assert json.loads(json.dumps(info)) == info


@live
def test_server_killed_mid_generation_is_retried_not_recorded(llama_server, caplog) -> None:
    """SIGKILL while a reply streams (~2 s of it), restart on the same port: the generation
    is retried and equals the uninterrupted one; nothing partial comes back."""
    caplog.set_level(logging.DEBUG, logger="vbw.generate.retry")  # the shared retry loop
    b = backend(llama_server.base_url, llama_server.model, max_retries=6)
    reference = ask(b, "Count from 1 to 40.", 160)
    result: dict[str, object] = {}
    worker = threading.Thread(target=lambda: result.update(gen=ask(b, "Count from 1 to 40.", 160)))
    try:
        worker.start()
        time.sleep(0.6)
        llama_server.kill()
        llama_server.start()
        worker.join(timeout=90)
    finally:
        if llama_server.process.poll() is not None:
            llama_server.start()
    gen = result["gen"]
    assert (gen.text, gen.n_tokens, gen.finish_reason) == (
        reference.text, reference.n_tokens, reference.finish_reason)
    causes = [r.getMessage() for r in caplog.records]
    assert b.retries == len(causes) >= 1, causes


# --- protocol, against a scripted stand-in ---------------------------------------------

def test_request_body() -> None:
    with StandIn([completion("hi")]) as srv:
        ask(backend(srv.base_url, stream=False), "Hello", 7, schema={"type": "object"})
    body = srv.posts[0]["body"]
    assert srv.posts[0]["path"] == "/v1/chat/completions"
    assert body == {"model": "m", "messages": [{"role": "user", "content": "Hello"}],
                    "max_tokens": 7, "temperature": 0, "seed": 1234, "repeat_penalty": 1.0,
                    "stream": False, "logprobs": True, "top_logprobs": 1,  # interventions
                    "response_format": {"type": "json_object", "schema": {"type": "object"}}}


def test_closed_port_fails_after_max_retries_in_bounded_time() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    start = time.monotonic()
    with pytest.raises(EngineError) as info:
        ask(backend(url, max_retries=2), "hi")
    assert time.monotonic() - start < 5  # backoff 0.5 + 1 s
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"POST {url}/chat/completions failed after 3 attempts: ")
    assert "refused" in msg.lower()


def test_503_twice_then_200_is_retried(fast_backoff) -> None:
    with StandIn([error(503, "loading"), error(503, "loading"), completion("ok", tokens=2)]) as srv:
        b = backend(srv.base_url, stream=False)
        gen = ask(b, "hi")
    assert (gen.text, gen.n_tokens, gen.finish_reason, b.retries) == ("ok", 2, "stop", 2)
    assert len(srv.posts) == 3


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_exhausted(fast_backoff, status) -> None:
    with StandIn([error(status, "busy")] * 3) as srv:
        with pytest.raises(EngineError, match=f"failed after 3 attempts: HTTP {status}: busy$"):
            ask(backend(srv.base_url), "hi")
    assert len(srv.posts) == 3


def test_retry_after_is_honoured(monkeypatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("vbw.generate.retry.time.sleep", slept.append)
    with StandIn([error(429, "slow down", **{"Retry-After": "3"}), completion("ok")]) as srv:
        assert ask(backend(srv.base_url, stream=False), "hi").text == "ok"
    assert slept == [3.0]


def test_400_with_schema_is_unsupported_schema() -> None:
    with StandIn([error(400, "Unsupported keyword 'patternProperties'")]) as srv:
        with pytest.raises(UnsupportedSchema, match=r"server-llama_cpp_python rejected the "
                           r"request carrying the schema \(HTTP 400\): Unsupported keyword"):
            ask(backend(srv.base_url), "hi", schema={"type": "object"})
    assert len(srv.posts) == 1  # not retried


@pytest.mark.parametrize("status", [400, 404, 422])
def test_4xx_without_schema_is_engine_error(status) -> None:
    with StandIn([error(status, "bad request")]) as srv:
        with pytest.raises(EngineError, match=f"-> HTTP {status}: bad request$"):
            ask(backend(srv.base_url), "hi")
    assert len(srv.posts) == 1


def test_401_with_schema_is_not_blamed_on_the_schema() -> None:
    with StandIn([error(401, "no key")]) as srv:
        with pytest.raises(EngineError, match=r"HTTP 401: no key \(set backend.api_key_env\)"):
            ask(backend(srv.base_url), "hi", schema={"type": "object"})


def test_redirect_is_refused() -> None:
    with StandIn([Canned(307, b"", {"Location": "http://elsewhere.invalid/v1"})]) as srv:
        with pytest.raises(EngineError, match=r"redirects \(HTTP 307\)"):
            ask(backend(srv.base_url), "hi")


def test_api_key_only_in_the_authorization_header(fast_backoff) -> None:
    env = {"VBW_KEY": SECRET}
    echo = f"Incorrect API key provided: {SECRET}"
    with StandIn([completion("ok"), error(400, echo), error(503, echo)] + [error(503, echo)] * 2,
                 gets={"/v1/models": completion(SECRET)}) as srv:
        b = backend(srv.base_url, env=env, api_key_env="VBW_KEY", stream=False)
        ask(b, "hi")
        texts = [repr(b), json.dumps(b.describe()), repr(vars(b))]
        for schema in ({"type": "object"}, None):
            with pytest.raises((UnsupportedSchema, EngineError)) as info:
                ask(b, "hi", schema=schema)
            texts += [str(info.value), repr(info.value)]
    assert srv.posts[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert all(r["headers"].get("Authorization") == f"Bearer {SECRET}" for r in srv.requests)
    assert not any(SECRET in t for t in texts), texts
    assert "***" in texts[-2]


def test_missing_api_key_variable_names_the_variable() -> None:
    with pytest.raises(EngineError, match="api_key_env names VBW_ABSENT, which is not set"):
        backend("http://127.0.0.1:1/v1", api_key_env="VBW_ABSENT")


def test_userinfo_is_sent_as_basic_auth_and_never_shown() -> None:
    with StandIn([completion("ok")]) as srv:
        b = backend(srv.base_url.replace("http://", "http://ann:s3cret-pw@"), stream=False)
        ask(b, "hi")
        assert "s3cret" not in repr(b) + json.dumps(b.describe())
    assert srv.posts[0]["headers"]["Authorization"] == "Basic YW5uOnMzY3JldC1wdw=="


def test_base_url_secrets_are_stripped_for_display() -> None:
    ep = parse_base_url("https://u:pw12@host.example:8443/openai/v1/"
                        "?api-version=2024&api-key=K1234")
    assert ep.shown("/models") == "https://host.example:8443/openai/v1/models?api-version=2024"
    assert ep.url("/models").endswith("/openai/v1/models?api-version=2024&api-key=K1234")
    assert ep.root_url("/props") == "https://host.example:8443/openai/props"


def test_stream_usage_wins_over_chunk_count() -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 7}}
    events = [chunk("Hel"), chunk("lo"), chunk(finish="stop"), usage]
    with StandIn([stream(events), stream(events[:3])]) as srv:
        b = backend(srv.base_url)
        with_usage, without = ask(b, "hi"), ask(b, "hi")
    assert srv.posts[0]["body"]["stream_options"] == {"include_usage": True}
    assert (with_usage.text, with_usage.n_tokens, with_usage.finish_reason) == ("Hello", 7, "stop")
    assert (without.text, without.n_tokens) == ("Hello", 2)  # counted content chunks
    assert 0 < with_usage.ttft_seconds <= with_usage.seconds


def test_stream_without_finish_reason_is_never_an_output(fast_backoff) -> None:
    cut = stream([chunk("partial")])  # [DONE] but no finish_reason: interrupted
    broken = stream([chunk("partial")], done=False)  # the connection closes mid-reply
    with StandIn([cut] * 3 + [broken] * 3) as srv:
        with pytest.raises(EngineError, match=r"ended the stream without a finish_reason "
                           r"\(llama-cpp-python's .*asked again without streaming"):
            ask(backend(srv.base_url), "hi")
        with pytest.raises(EngineError, match=r"3 attempts: the stream broke off before a "
                           r"finish_reason$"):
            ask(backend(srv.base_url), "hi")
    assert len(srv.posts) == 6
    # after a stream cut short the same request goes again without streaming
    assert [p["body"]["stream"] for p in srv.posts[:3]] == [True, False, False]


def test_a_stream_cut_short_is_asked_again_unstreamed(fast_backoff) -> None:
    cut = stream([chunk("par")])  # [DONE] but no finish_reason: another request arrived
    with StandIn([cut, completion("partial done", tokens=3)]) as srv:
        gen = ask(backend(srv.base_url), "hi")
    assert (gen.text, gen.n_tokens, gen.finish_reason, gen.ttft_seconds) == \
        ("partial done", 3, "stop", None)
    assert [p["body"]["stream"] for p in srv.posts] == [True, False]


def test_error_event_inside_a_stream() -> None:
    bad = stream([chunk("x"), {"error": {"code": 400, "message": "grammar failed"}}])
    with StandIn([bad]) as srv:
        with pytest.raises(UnsupportedSchema, match="grammar failed"):
            ask(backend(srv.base_url), "hi", schema={"type": "object"})


@pytest.mark.parametrize("finish", ["tool_calls", "content_filter", None])
def test_other_finish_reasons_are_engine_errors(finish) -> None:
    with StandIn([completion("x", finish=finish)]) as srv:
        with pytest.raises(EngineError, match=f"finish_reason {finish!r} is neither"):
            ask(backend(srv.base_url, stream=False), "hi")


def test_length_and_non_streaming_fallback() -> None:
    """A server that ignores stream=true and answers JSON is read as a plain reply."""
    with StandIn([completion("abc", finish="length", tokens=4)]) as srv:
        gen = ask(backend(srv.base_url), "hi")
    assert (gen.text, gen.finish_reason, gen.n_tokens) == ("abc", "length", 4)
    assert gen.ttft_seconds is None


def test_not_a_completion_is_an_engine_error() -> None:
    with StandIn([Canned(body=b'{"object": "list"}')]) as srv:
        with pytest.raises(EngineError, match="the reply is not a chat completion"):
            ask(backend(srv.base_url, stream=False), "hi")


def test_compile_checks_serialisability() -> None:
    b = backend("http://127.0.0.1:1/v1")
    assert b.compile({"type": "object"}) == 0.0
    with pytest.raises(UnsupportedSchema, match="not JSON-serialisable"):
        b.compile({"const": float("nan")})
