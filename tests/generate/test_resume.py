"""Resume checks on the typed header, without a model: a replay continues only the same
experiment (task, engine, arms, model, decoding, caps, KV reuse), a changed task or changed
prompts need allow_task_mismatch=true, and 0.1 or hand-written replays are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPLAYS, TASK_CONF
from vbw.config import BatchConfig, RunConfig
from vbw.errors import ReplayError
from vbw.generate.items import prompt_hash
from vbw.generate.live import _check_resume
from vbw.generate.live import _planned_header as planned_header
from vbw.generate.model import ModelFile
from vbw.replay import ArmRecord, CompleteHeader, ItemRecord, ReplayHeader, ReplayWriter
from vbw.task.arms import task_arms
from vbw.task.runner import load_task

TASK = load_task(TASK_CONF / "gsm8k.yaml")
ITEMS = TASK.items(2)
ARMS = task_arms(TASK.schema_names, TASK.spec.answer_schema, ["unconstrained", "constrained"])
MODEL = ModelFile(path="/m/model.gguf", sha256="0" * 64, source="path", file="model.gguf")


def _cfg(**engine: object) -> RunConfig:
    return RunConfig.model_validate({
        "model": {"name": "mine", "path": "/m/model.gguf"},
        "engine": {"name": "outlines", **engine},
        "arms": {"name": "x", "kinds": ["unconstrained", "constrained"],
                 "max_tokens": {"free": 8, "json": 8, "package": 8}}})


def _planned_header(**engine: object) -> ReplayHeader:
    return planned_header(TASK, _cfg(**engine), len(ITEMS), ARMS, MODEL)


def _started(path: Path, planned: ReplayHeader, first_prompt_hash: str | None = None) -> Path:
    """A replay started by a run with `planned`'s configuration, one item done."""
    w = ReplayWriter(path)
    w.start(CompleteHeader.model_validate({
        **planned.model_dump(mode="json", exclude_none=True), "versions": {"vbw": "0"},
        "hardware": {},
        "canary_seconds": {}, "started": "now", "load_seconds": 0.1}))
    item = ITEMS[0]
    w.append(ItemRecord(id=item.id, arms={a.key: ArmRecord(text="x") for a in ARMS},
                        prompt_hash=first_prompt_hash or prompt_hash(TASK, item, ARMS)))
    return path


def _check(path: Path, planned: ReplayHeader, allow: bool = False) -> set[str]:
    return _check_resume(path, planned, TASK, ITEMS, ARMS, allow)


def test_same_configuration_resumes(tmp_path: Path) -> None:
    planned = _planned_header()
    assert _check(_started(tmp_path / "r.jsonl", planned), planned) == {"gsm8k_test_0"}


@pytest.mark.parametrize("change,match", [
    ({"name": "llamacpp"}, "meta.engine is 'outlines', this run has 'llamacpp'"),
    ({"kv_reuse": False}, "meta.kv_reuse is True, this run has False"),
    ({"whitespace": "compact"}, "meta.whitespace is 'flexible', this run has 'compact'"),
    ({"n_ctx": 1024}, r"meta.decoding is \{.*'n_ctx': 4096\}, this run has \{.*'n_ctx': 1024\}"),
])
def test_another_configuration_is_refused(tmp_path: Path, change: dict, match: str) -> None:
    path = _started(tmp_path / "r.jsonl", _planned_header())
    with pytest.raises(ReplayError, match=f"cannot resume: {match}"):
        _check(path, _planned_header(**change), allow=True)


def test_another_model_is_refused(tmp_path: Path) -> None:
    path = _started(tmp_path / "r.jsonl", _planned_header())
    other = ReplayHeader.model_validate({**_planned_header().model_dump(mode="json"),
                                         "model": {"name": "mine", "file": "other.gguf",
                                                   "sha256": "1" * 64, "source": "path:/o"}})
    with pytest.raises(ReplayError, match=r"meta.model is \{'name': 'mine', 'file': "
                                          r"'model.gguf'"):
        _check(path, other, allow=True)


def test_changed_task_needs_allow_task_mismatch(tmp_path: Path) -> None:
    planned = _planned_header()
    stale = planned.model_copy(update={"task_hash": "0" * 64})
    path = _started(tmp_path / "r.jsonl", stale)
    with pytest.raises(ReplayError, match="meta.task_hash differs"):
        _check(path, planned)
    assert _check(path, planned, allow=True) == {"gsm8k_test_0"}


def test_changed_prompts_need_allow_task_mismatch(tmp_path: Path) -> None:
    planned = _planned_header()
    path = _started(tmp_path / "r.jsonl", planned, first_prompt_hash="f" * 64)
    with pytest.raises(ReplayError, match="item gsm8k_test_0's prompts differ"):
        _check(path, planned)


def test_legacy_and_hand_written_replays_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="a validbutwrong 0.1 replay cannot be resumed"):
        _check(REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl", _planned_header())
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"meta": {"format": "vbw-replay/1", "task": "gsm8k",
                                         "arms": [a.key for a in ARMS]}}) + "\n")
    with pytest.raises(ReplayError, match="meta.engine is None, this run has 'outlines'"):
        _check(mine, _planned_header())


def test_in_process_replays_from_before_the_whitespace_setting_read_as_flexible() -> None:
    header = json.loads((REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl").read_text()
                        .splitlines()[0])["meta"]
    header.pop("whitespace", None)
    assert ReplayHeader.model_validate(header).whitespace == "flexible"
    assert _planned_header().whitespace == "flexible"


def _planned_repack(repack: str) -> ReplayHeader:
    cfg = _cfg()
    cfg = cfg.model_copy(update={"model": cfg.model.model_copy(update={"repack": repack})})
    return planned_header(TASK, cfg, len(ITEMS), ARMS, MODEL)


def test_another_repack_is_refused(tmp_path: Path) -> None:
    path = _started(tmp_path / "r.jsonl", _planned_repack("on"))
    assert _check(path, _planned_repack("on")) == {"gsm8k_test_0"}
    with pytest.raises(ReplayError, match="cannot resume: meta.repack is True, this run has False"):
        _check(path, _planned_repack("off"), allow=True)


def test_a_replay_from_before_the_repack_setting_was_made_with_repacking(tmp_path: Path) -> None:
    before = _planned_repack("on").model_copy(update={"repack": None})
    path = _started(tmp_path / "r.jsonl", before)
    assert _check(path, _planned_repack("on")) == {"gsm8k_test_0"}
    with pytest.raises(ReplayError, match="cannot resume: meta.repack is True, this run has False"):
        _check(path, _planned_repack("off"), allow=True)


def test_in_process_runs_batch_by_default_and_resume_names_the_setting(tmp_path: Path) -> None:
    """batch.sequences null: 16 sequences per decode in process (the header's `batch`); a
    replay of one sequence at a time (no `batch`, as every replay before the setting) is
    resumed with batch.sequences=1, which the refusal names."""
    one_cfg = _cfg().model_copy(update={"batch": BatchConfig(sequences=1)})
    one = planned_header(TASK, one_cfg, len(ITEMS), ARMS, MODEL)
    assert one.batch is None and _planned_header().batch == BatchConfig.IN_PROCESS == 16
    path = _started(tmp_path / "r.jsonl", one)
    with pytest.raises(ReplayError, match="cannot resume: meta.batch is 1, this run has 16; "
                                          "pass batch.sequences=1$"):
        _check(path, _planned_header())
    assert _check(path, one) == {"gsm8k_test_0"}
    assert BatchConfig().resolved(in_process=False) == 1  # a server: never batched here
    assert BatchConfig(sequences=3).resolved(in_process=True) == 3


def test_resume_refuses_another_flash_attention_setting_and_names_it(tmp_path: Path) -> None:
    """batch.flash_attn decides the batch's kernels, so the texts: a batched replay is
    continued only with its setting; one from before the setting (no `flash_attn`) was
    decoded without flash attention."""
    exact_cfg = _cfg().model_copy(update={"batch": BatchConfig(flash_attn=False)})
    exact = planned_header(TASK, exact_cfg, len(ITEMS), ARMS, MODEL)
    fast = _planned_header()  # the default: flash attention on
    assert fast.flash_attn is True and exact.flash_attn is False and exact.batch == 16
    path = _started(tmp_path / "r.jsonl", fast)
    with pytest.raises(ReplayError, match="cannot resume: meta.flash_attn is True, this run "
                                          "has False; pass batch.flash_attn=true$"):
        _check(path, exact)
    assert _check(path, fast) == {"gsm8k_test_0"}
    before = _started(tmp_path / "b.jsonl", exact.model_copy(update={"flash_attn": None}))
    assert _check(before, exact) == {"gsm8k_test_0"}
    with pytest.raises(ReplayError, match="meta.flash_attn is False, this run has True"):
        _check(before, fast)
