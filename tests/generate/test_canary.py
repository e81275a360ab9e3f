"""The seed probe of a sampled server run (vbw.generate.canary.seed_probe) and how the
report states it (vbw.report.provenance): a backend scripted to honour, ignore or not
show the seed. The canary itself is tested on the real engines in test_live.py."""

from __future__ import annotations

import pytest

from vbw.generate.backend import Backend, Generation, Sampling
from vbw.generate.canary import SEED_PROMPT, seed_probe
from vbw.replay import ReplayHeader
from vbw.report.provenance import SEED_CLAUSES, provenance


class Scripted(Backend):
    """Answers the probe by a rule of the request's seed and how often it was asked."""

    engine = "scripted"

    def __init__(self, rule) -> None:
        self.rule, self.asked = rule, []

    def compile(self, schema):
        return 0.0

    def generate(self, messages, config):
        assert messages[0]["content"] == SEED_PROMPT and config.sampling.temperature == 0.7
        self.asked.append(config.sampling.seed)
        return Generation(text=self.rule(config.sampling.seed, len(self.asked)), seconds=0.0,
                          ttft_seconds=None, finish_reason="stop", n_tokens=3)


@pytest.mark.parametrize("rule,verdict", [
    (lambda seed, n: f"words {seed}", "honoured"),
    (lambda seed, n: f"words {n}", "ignored"),            # every request another text
    (lambda seed, n: "the same words", "undetermined"),   # nothing told apart
])
def test_the_probe_tells_an_honoured_seed_from_an_ignored_one(rule, verdict) -> None:
    backend = Scripted(rule)
    assert seed_probe(backend, Sampling(temperature=0.7, seed=99)) == verdict
    assert backend.asked == [1, 1, 2]


def test_the_report_says_when_the_seed_was_not_honoured() -> None:
    def line(seed: str | None) -> str:
        backend = {"name": "openai", "base_url": "http://h", "model": "m", "dialect": "vllm"}
        if seed is not None:
            backend["seed"] = seed
        header = ReplayHeader.model_validate({"format": "vbw-replay/1", "task": "t",
                                              "arms": ["unconstrained"], "backend": backend})
        return provenance(header, [], None)
    assert SEED_CLAUSES["ignored"] in line("ignored")
    assert SEED_CLAUSES["undetermined"] in line("undetermined")
    assert "seed" not in line("honoured") and "seed" not in line(None)
