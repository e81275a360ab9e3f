"""Every committed replay re-scores to the same bytes in every output file.

The digests in tests/reference/outputs.sha256.json were taken before the speed work of
issue 22 (the lazy JSON grammar, the check_schema cache, the prompt-render proof, the
escaping): any change that alters a report of a committed replay, by a byte, fails here.
A change meant to alter reports regenerates them and says why in its commit:

    python -m tests.test_byte_identity --update

Each task's replays are scored in one `vbw -m` process (Hydra's basic launcher runs the
jobs one after another), each job's files in its own folder.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, TASK_CONF, run_vbw
from vbw.task.arms import ARM_KINDS
from vbw.task.runner import load_task

DIGESTS = ROOT / "tests" / "reference" / "outputs.sha256.json"
OUTPUTS = ("report.json", "report.md", "report.html", "quadrants.svg", "ledger.csv",
           "answers.csv")


def _kinds(path: Path) -> tuple[str, str]:
    """The arm kinds the replay's header lists, in vbw's order (a replay of a preset other
    than the standard four, e.g. arms=tools, is scored on its own arms), and the schema
    labels of its arms when they are not all the task's (arms.schemas; '' otherwise)."""
    with open(path, encoding="utf-8") as f:
        arms = json.loads(f.readline())["meta"].get("arms") or list(ARM_KINDS)
    kinds = list(dict.fromkeys(a.split("[")[0] for a in arms))
    labels = list(dict.fromkeys(a[a.index("[") + 1:-1] for a in arms if "[" in a))
    every = load_task(TASK_CONF / f"{path.parts[-3]}.yaml").schema_names
    return ",".join(kinds), "" if set(labels) == set(every) else ",".join(labels)


def replays() -> dict[tuple[str, str, str], list[str]]:
    """Committed replays by (task, arm kinds, schema labels), as paths relative to the
    repository root."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for path in sorted((ROOT / "replays").glob("*/*/*.jsonl")):
        out.setdefault((path.parts[-3], *_kinds(path)), []).append(
            path.relative_to(ROOT).as_posix())
    return out


def digests(work: Path, processes: str = "1") -> dict[str, str]:
    """replay path/output file -> sha256 of the file vbw writes re-scoring it, scoring
    in one process or two (vbw.score.split)."""
    found: dict[str, str] = {}
    for (task, kinds, schemas), paths in replays().items():
        sweep = work / f"{task}-{kinds.replace(',', '-')}{'-' if schemas else ''}{schemas}"
        only = [f"arms.schemas=[{schemas}]"] if schemas else []
        proc = run_vbw("-m", f"task={task}", f"arms.kinds=[{kinds}]", *only,
                       f"replay={','.join(paths)}",
                       f"hydra.sweep.dir={sweep}", cwd=ROOT, timeout=600,
                       env={"VBW_PROCESSES": processes})
        assert proc.returncode == 0, proc.stderr[-3000:]
        for job, path in enumerate(paths):
            for name in OUTPUTS:
                # the checkout's path is in the provenance line: hash it out
                data = (sweep / str(job) / name).read_bytes().replace(
                    str(ROOT).encode(), b"<root>")
                found[f"{path}/{name}"] = hashlib.sha256(data).hexdigest()
    return found


@pytest.mark.parametrize("processes", ["1", "2"])
def test_every_committed_replay_rescores_to_the_same_bytes(tmp_path: Path,
                                                           processes: str) -> None:
    """In one process, and with a forked worker scoring every other item (forced on
    these small replays): the same bytes as before either existed."""
    expected = json.loads(DIGESTS.read_text(encoding="utf-8"))
    got = digests(tmp_path, processes)
    assert sorted(got) == sorted(expected), "replays were added or removed: --update"
    changed = [k for k in expected if got[k] != expected[k]]
    assert not changed, f"outputs changed: {changed}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        DIGESTS.write_text(json.dumps(digests(Path(tmp)), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {DIGESTS}")
