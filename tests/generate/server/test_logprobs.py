"""Interventions from a server's log-probabilities: asked for only where the server
reports them before its constraint, and derived only from entries that join up to the
reply's text. The real llama-cpp-python server shows the very refused argmaxes (and
log-probabilities) that vbw's in-process llamacpp engine records on the same item."""

from __future__ import annotations

import pytest

from tests.conftest import TASK_CONF
from vbw.config import OpenAIBackendConfig
from vbw.generate.backend import GenerateConfig
from vbw.generate.server.client import OpenAIServerBackend
from vbw.generate.dialects import DIALECTS, dialect_for
from vbw.generate.server.logprobs import interventions
from vbw.task.arms import Arm
from vbw.task.runner import load_task


def _e(token: str, lp: float, *tops: tuple[str, float]) -> dict:
    return {"token": token, "logprob": lp,
            "top_logprobs": [{"token": t, "logprob": v} for t, v in tops or ((token, lp),)]}


def test_only_dialects_with_pre_constraint_logprobs_ask_for_them() -> None:
    asked = {d for d in DIALECTS.kinds if dialect_for(d).logprob_fields()}
    assert asked == {d for d in DIALECTS.kinds
                     if DIALECTS.get(d).logprobs_before_constraint}
    assert asked == {"llama_cpp_python", "llama_server"}


def test_a_refused_top_token_is_an_intervention_at_its_character_offset() -> None:
    entries = [_e("{", -2.0, ("```", -1.5), ("{", -2.0)), _e(' "a', -0.1),
               _e('":', -3.0, ("=", -0.2)), _e("1", -0.5, ("2", -0.5)), _e("}", -0.01)]
    got = interventions(entries, '{ "a":1}')
    assert [(i.pos, i.char, i.wanted, i.forced) for i in got] == [(0, 0, "```", "{"),
                                                                   (2, 4, "=", '":')]
    assert got[0].lp_wanted == -1.5 and got[0].lp_forced == -2.0  # the tie at 3 is not one
    assert got[0].allowed_mass is None and got[0].wanted_id is None


@pytest.mark.parametrize("entries,text", [
    (None, "x"),  # the server sent none: not recorded
    ([_e("a", -0.1)], "ab"),  # tokens do not join up to the text
    ([{"token": "a", "logprob": "high", "top_logprobs": []}], "a"),
    ([{"token": "a", "logprob": -0.1, "top_logprobs": []}], "a"),
    ([{"token": "a", "logprob": float("nan"), "top_logprobs": [{"token": "a"}]}], "a"),
    (["a"], "a"),
])
def test_untrustworthy_logprobs_record_nothing(entries, text) -> None:
    assert interventions(entries, text) is None


@pytest.mark.live
@pytest.mark.parametrize("stream", [True, False])
def test_llama_cpp_python_server_shows_the_in_process_interventions(llama_server, backends,
                                                                    stream: bool) -> None:
    task = load_task(TASK_CONF / "bfcl_simple.yaml")
    item = task.items(1)[0]
    messages = task.messages(item, Arm("constrained", "arguments"))
    config = GenerateConfig(max_tokens=32, schema=item.schemas["arguments"])
    cfg = OpenAIBackendConfig(name="openai", base_url=llama_server.base_url,
                              model=llama_server.model, dialect="llama_cpp_python",
                              stream=stream)
    served = OpenAIServerBackend(cfg, seed=1234, env={}).generate(messages, config)
    local = backends["llamacpp"].generate(messages, config)
    assert served.text == local.text
    # a server never reports the end-of-generation token: the constraint forcing the end
    # is the one event it cannot show
    inside = [i for i in local.interventions if i.pos < local.n_tokens]
    assert served.interventions is not None and len(served.interventions) == len(inside) > 0
    for s, l in zip(served.interventions, inside):
        assert (s.pos, s.char, s.wanted, s.forced) == (l.pos, l.char, l.wanted, l.forced)
        assert s.lp_wanted > s.lp_forced
        # the server's own numbers: equal to 4 decimals from a fresh prompt, but a request
        # that hits its prompt cache re-evaluates the last prompt token alone, on another
        # llama.cpp kernel path (~0.2 apart at the first step here)
        assert s.lp_wanted == pytest.approx(l.lp_wanted, abs=0.5)
        assert s.lp_forced == pytest.approx(l.lp_forced, abs=0.5)
    free = OpenAIServerBackend(cfg, seed=1234, env={}).generate(
        messages, GenerateConfig(max_tokens=8))
    assert free.interventions is None  # no grammar, no field
