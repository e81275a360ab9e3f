"""The server dialects (vbw.generate.dialects): every built-in dialect's request fields,
pinned in full and in order (a wrong entry of any dialect fails here), the registry that
holds them, and the one-line refusal of a name none has."""

from __future__ import annotations

import json

import pytest

from tests.generate.standin import StandIn, completion
from tests.generate.server.test_client import ask, backend
from vbw.errors import ConfigError
from vbw.generate.backend import Tool
from vbw.generate.dialects import DIALECTS, Dialect, dialect_for
from vbw.generate.wire import parse_base_url

S = {"type": "object"}
TOOL = Tool(name="f", description="d")
OFFERED = {"type": "function", "function": {"name": "f", "description": "d", "parameters": S}}
NAMED = {"type": "function", "function": {"name": "f"}}
LOGPROBS = {"logprobs": True, "top_logprobs": 1}

# name -> (schema fields, tool fields, greedy extras, logprob fields), as the servers'
# documentation has them (references in each dialect's module)
PINNED = {
    "openai": (
        {"response_format": {"type": "json_schema", "json_schema": {
            "name": "vbw_output", "schema": S, "strict": True}}},
        {"tools": [{"type": "function", "function": {**OFFERED["function"], "strict": True}}],
         "tool_choice": NAMED, "parallel_tool_calls": False},
        {}, {}),
    "vllm": (
        {"structured_outputs": {"json": S}},
        {"tools": [OFFERED], "tool_choice": NAMED},
        {"repetition_penalty": 1.0}, {}),
    "llama_server": (
        {"json_schema": S},
        {"tools": [OFFERED], "tool_choice": "required", "parallel_tool_calls": False},
        {"repeat_penalty": 1.0}, LOGPROBS),
    "llama_cpp_python": (
        {"response_format": {"type": "json_object", "schema": S}},
        {"tools": [OFFERED], "tool_choice": NAMED},
        {"repeat_penalty": 1.0}, LOGPROBS),
    "ollama": (
        {"response_format": {"type": "json_schema", "json_schema": {
            "name": "vbw_output", "schema": S}}},
        {"tools": [OFFERED], "tool_choice": NAMED},
        {}, {}),
}


def test_vbw_has_these_dialects_in_this_order() -> None:
    own = [k for k, c in DIALECTS.classes.items() if c.__module__.startswith("vbw.")]
    assert own == list(PINNED)


@pytest.mark.parametrize("name", list(PINNED))
def test_each_dialect_sends_what_its_server_documents(name: str) -> None:
    d = dialect_for(name)
    got = (d.schema_fields(S), d.tool_fields(TOOL, S), d.greedy_extras(), d.logprob_fields())
    # compared as JSON text: the key order is part of the request bytes
    assert [json.dumps(x) for x in got] == [json.dumps(x) for x in PINNED[name]]


def test_a_dialect_hands_out_copies() -> None:
    d = dialect_for("vllm")
    d.greedy_extras()["repetition_penalty"] = 9
    schema = {"type": "object"}
    d.schema_fields(schema)["structured_outputs"]["json"]["x"] = 1
    assert d.greedy_extras() == {"repetition_penalty": 1.0} and schema == {"type": "object"}


def test_the_request_body_carries_the_dialects_fields_after_the_sampling_ones() -> None:
    with StandIn([completion("{}"), completion("hi")]) as srv:
        b = backend(srv.base_url, dialect="llama_server", stream=False)
        ask(b, "hi", 7, schema=S)
        ask(b, "hi", 7)
    constrained, free = (p["body"] for p in srv.posts)
    assert list(constrained) == ["model", "messages", "max_tokens", "temperature", "seed",
                                 "repeat_penalty", "stream", "json_schema", "logprobs",
                                 "top_logprobs"]
    # no schema: no dialect field and no question about log-probabilities
    assert list(free) == ["model", "messages", "max_tokens", "temperature", "seed",
                          "repeat_penalty", "stream"]


def test_an_unknown_dialect_is_one_line_with_a_did_you_mean() -> None:
    with pytest.raises(ConfigError) as e:
        dialect_for("vlm")
    assert str(e.value) == ("backend.dialect: unknown dialect kind 'vlm'; did you mean 'vllm'? "
                            "valid: openai, vllm, llama_server, llama_cpp_python, ollama")


def test_a_subclass_changes_only_what_it_overrides() -> None:
    class Guided(Dialect):
        name = "zoo_guided"
        greedy = {"top_k": -1}

        def schema_fields(self, schema):
            return {"guided_json": dict(schema)}

    g = Guided()
    assert g.schema_fields(S) == {"guided_json": S} and g.greedy_extras() == {"top_k": -1}
    assert g.tool_fields(TOOL, S) == {"tools": [OFFERED], "tool_choice": NAMED}
    assert g.logprob_fields() == {}
    assert "zoo_guided" not in DIALECTS.classes  # only an entry point or plug() adds it


def test_every_dialect_probes_the_server_the_same_way() -> None:
    """The probe (vbw.generate.probe) asks every endpoint an OpenAI-compatible server may
    answer: a dialect is also used against another server's software (`openai` in front
    of a vLLM from before its rename)."""
    asked: dict[str, list[str]] = {}
    for name in PINNED:
        paths: list[str] = []
        dialect_for(name).probe(lambda url, t: (paths.append(url), (None, None))[1],
                                parse_base_url("http://h/v1"), "m")
        asked[name] = paths
    assert all(p == asked["openai"] for p in asked.values())
    assert asked["openai"] == ["http://h/v1/models", "http://h/openapi.json", "http://h/props",
                               "http://h/version", "http://h/api/version"]


def test_a_sampled_request_carries_the_sampler_and_its_own_seed() -> None:
    from vbw.generate.backend import Sampling

    s = Sampling(temperature=0.7, top_p=0.9, top_k=0, min_p=0.05, seed=123)
    # the truncations a dialect takes go along even when off: llama.cpp's defaults are on
    assert dialect_for("llama_server").sampling_fields(s) == {
        "temperature": 0.7, "top_p": 0.9, "seed": 123, "min_p": 0.05, "top_k": 0}
    assert dialect_for("openai").sampling_fields(s) == {
        "temperature": 0.7, "top_p": 0.9, "seed": 123}
    with StandIn([completion("{}")]) as srv:
        b = backend(srv.base_url, dialect="vllm", stream=False)
        from vbw.generate.backend import GenerateConfig
        b.generate([{"role": "user", "content": "hi"}],
                   GenerateConfig(max_tokens=7, sampling=s))
    body = srv.posts[0]["body"]
    assert (body["temperature"], body["top_p"], body["seed"], body["top_k"],
            body["min_p"], body["repetition_penalty"]) == (0.7, 0.9, 123, 0, 0.05, 1.0)


@pytest.mark.parametrize("dialect,setting,refused", [
    ("openai", "decoding.top_k=5", "top_k"), ("ollama", "decoding.min_p=0.1", "min_p"),
    ("openai", "decoding.top_p=0.5", None), ("vllm", "decoding.top_k=5", None)])
def test_a_truncation_the_dialect_cannot_send_is_refused_at_start(
        dialect: str, setting: str, refused: str | None) -> None:
    from vbw.config import DecodingConfig, OpenAIBackendConfig
    from vbw.generate.providers import sampled

    key, value = setting.removeprefix("decoding.").split("=")
    decoding = DecodingConfig.model_validate({"temperature": 0.5, key: value})
    settings = OpenAIBackendConfig(name="openai", base_url="http://127.0.0.1:9",
                                   model="m", dialect=dialect)
    if refused is None:
        assert sampled(settings, decoding)["strategy"] == "sample"
        return
    with pytest.raises(ConfigError) as e:
        sampled(settings, decoding)
    assert str(e.value).startswith(f"{setting}: the {dialect} dialect cannot send it")
