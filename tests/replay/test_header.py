"""The typed header: a minimal vbw-replay/1 header from any stack, the validbutwrong 0.1
header migrated into the same fields, and the complete header live generation writes."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tests.conftest import REPLAYS
from vbw.replay.header import CompleteHeader, ReplayHeader

MINIMAL = {"format": "vbw-replay/1", "task": "gsm8k", "arms": ["unconstrained"]}


def test_minimal_v1_header_needs_only_format_task_arms() -> None:
    h = ReplayHeader.model_validate(MINIMAL)
    assert (h.version, h.task, h.arms) == (1, "gsm8k", ["unconstrained"])
    assert h.task_hash is None and h.model is None and h.hardware is None and h.started is None
    assert h.as_written() == MINIMAL


def test_partial_provenance_and_notes_are_kept() -> None:
    h = ReplayHeader.model_validate({**MINIMAL, "model": {"name": "my-model"},
                                     "hardware": {"gpu": "A100"}, "notes": {"api": "x"}})
    assert h.model is not None and h.model.name == "my-model" and h.model.file is None
    assert h.hardware is not None and h.hardware.cpu is None
    assert h.as_written()["hardware"] == {"gpu": "A100"} and h.notes == {"api": "x"}


def test_unknown_v1_key_fails() -> None:
    with pytest.raises(ValidationError, match="task_hsh"):
        ReplayHeader.model_validate({**MINIMAL, "task_hsh": "abc"})
    with pytest.raises(ValidationError, match="model.nme"):
        ReplayHeader.model_validate({**MINIMAL, "model": {"nme": "m"}})


def test_legacy_header_is_migrated_into_the_typed_fields() -> None:
    raw = json.loads((REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl").open().readline())["meta"]
    h = ReplayHeader.model_validate(raw)
    assert h.version == 0 and h.format is None and h.arms is None and h.task_hash is None
    assert (h.task, h.n, h.engine) == ("gsm8k", 200, "outlines")
    assert h.model is not None and h.model.file == "qwen2.5-0.5b-instruct-q4_k_m.gguf"
    assert h.model.sha256 == raw["model_sha256"] and h.model.source == raw["model_source"]
    assert h.hardware is not None and h.hardware.cpu == "Apple M1"
    assert h.started == "2026-10-10T19:06:08-0400" and h.load_seconds == 1.173
    assert h.versions is not None and h.versions["validbutwrong"] == "0.1.0"
    assert h.decoding == {"strategy": "greedy (temperature 0)"}


def test_a_file_cannot_set_the_version() -> None:
    """The version comes from the header's shape: `version` is an unknown key, and the
    reader's own slot is overwritten."""
    with pytest.raises(ValidationError, match="version"):
        ReplayHeader.model_validate({**MINIMAL, "version": 0})
    assert ReplayHeader.model_validate({**MINIMAL, "__vbw_version__": 0}).version == 1


def test_complete_header_requires_every_field() -> None:
    with pytest.raises(ValidationError) as e:
        CompleteHeader.model_validate({**MINIMAL, "model": {"name": "m"}})
    missing = {".".join(map(str, x["loc"])) for x in e.value.errors() if x["type"] == "missing"}
    assert missing == {"task_hash", "n", "engine", "versions", "hardware", "decoding",
                       "max_tokens", "canary_seconds", "started", "load_seconds"}


COMPLETE = {**MINIMAL, "task_hash": "h", "n": 1, "engine": "outlines", "versions": {},
            "hardware": {}, "decoding": {}, "max_tokens": {}, "canary_seconds": {},
            "started": "now", "load_seconds": 0.1}


def test_an_in_process_run_records_its_weights_and_reuse() -> None:
    with pytest.raises(ValidationError, match="sha256"):
        CompleteHeader.model_validate({**COMPLETE, "model": {"name": "m"}, "kv_reuse": True})
    with pytest.raises(ValidationError, match="kv_reuse"):
        CompleteHeader.model_validate({**COMPLETE, "model": {
            "name": "m", "file": "f", "sha256": "0" * 64, "source": "s"}})


def test_a_server_run_records_its_server_instead() -> None:
    server = {"name": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "m",
              "dialect": "llama_cpp_python"}
    h = CompleteHeader.model_validate({**COMPLETE, "engine": "server-llama_cpp_python",
                                       "model": {"name": "m", "source": server["base_url"]},
                                       "backend": server})
    assert h.backend is not None and h.backend.identity()[2] == "llama_cpp_python"
    assert h.kv_reuse is None


@pytest.mark.parametrize("name", ["openai", "my_plugin-server.v2"])
def test_the_backend_block_names_any_backend_kind(name: str) -> None:
    """A replay from a backend kind an installed package added reads where that package
    is not installed: the block's name is any sane name, not vbw's kinds alone."""
    server = {"name": name, "base_url": "http://h/v1", "model": "m", "dialect": "d"}
    h = ReplayHeader.model_validate({**MINIMAL, "backend": server})
    assert h.backend is not None and h.backend.name == name


@pytest.mark.parametrize("name", ["", "two words", "x" * 65, "<script>"])
def test_the_backend_block_name_is_a_sane_name(name: str) -> None:
    with pytest.raises(ValidationError, match=r"backend\.name"):
        ReplayHeader.model_validate({**MINIMAL, "backend": {
            "name": name, "base_url": "http://h/v1", "model": "m", "dialect": "d"}})


def test_complete_header_writes_the_v1_key_order() -> None:
    written = (REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl").open().readline()
    raw = json.loads(written)["meta"]
    assert CompleteHeader.model_validate(raw).as_written() == raw
    assert list(CompleteHeader.model_validate(raw).as_written()) == list(raw)
