"""llguidance on SmolLM2: what it adds over the other two engines (property order with an
optional property first, numeric bounds, its own refusals), and the whitespace setting
on every engine."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from tests.conftest import TASK_CONF
from tests.generate.conftest import complete
from vbw.config import MaxTokens
from vbw.errors import UnsupportedSchema
from vbw.generate.engines import make_engine
from vbw.generate.items import generate_item
from vbw.generate.local import LocalBackend
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

pytestmark = pytest.mark.live

OPTIONAL_FIRST = {
    "type": "object",
    "properties": {"note": {"type": "string", "maxLength": 40},
                   "answer": {"type": "integer", "minimum": 0, "maximum": 9}},
    "required": ["answer"],
    "additionalProperties": False,
}
PROMPT = "What is 500 + 700? Reply with a JSON object with a short note and the answer."


def test_keeps_optional_before_required_order_and_bounds(backends) -> None:
    gen = complete(backends["llguidance"], PROMPT, OPTIONAL_FIRST, 64)
    obj = json.loads(gen.text)
    jsonschema.validate(obj, OPTIONAL_FIRST)  # 0 <= answer <= 9 although the sum is 1200
    if "note" in obj:
        assert list(obj) == ["note", "answer"]


def test_generates_and_scores_a_bfcl_item_llamacpp_refuses(runtime, engines) -> None:
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    item = task.items(only={"simple_29"})[0]
    with pytest.raises(UnsupportedSchema, match="follows an optional one"):
        engines["llamacpp"].compile(item.schemas["arguments"])
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    caps = MaxTokens(free=64, json=96, package=96)
    rec = generate_item(task, item, arms, LocalBackend(runtime, engines["llguidance"]), caps)
    assert not rec.unsupported
    for key in ("constrained[arguments]", "reason_then_constrain[arguments]"):
        text = rec.arms[key].text
        if rec.arms[key].finish_reason == "stop":
            jsonschema.validate(json.loads(text), item.schemas["arguments"])
        task.extract(text, item, key == "unconstrained")  # scores


def test_refusal_names_llguidances_reason(engines) -> None:
    with pytest.raises(UnsupportedSchema, match="engine llguidance cannot compile the schema: .+"):
        engines["llguidance"].compile({"type": "string", "format": "no-such-format-x"})


OUTSIDE_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')


@pytest.mark.parametrize("name", ["outlines", "llamacpp", "llguidance"])
def test_compact_whitespace_allows_none_between_tokens(runtime, name) -> None:
    schema = {"type": "object", "properties": {
        "city": {"type": "string", "maxLength": 20},
        "tags": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}},
        "required": ["city", "tags"], "additionalProperties": False}
    backend = LocalBackend(runtime, make_engine(name, runtime, whitespace="compact"))
    gen = complete(backend, "Reply in JSON, nicely indented: a city and up to three numbers.",
                   schema, 64)
    skeleton = OUTSIDE_STRINGS.sub('""', gen.text)
    assert gen.finish_reason == "stop" and not re.search(r"\s", skeleton), gen.text
    jsonschema.validate(json.loads(gen.text), schema)
