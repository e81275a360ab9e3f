"""What regenerating a committed replay changed (issue 19: the SmolLM2 BFCL outlines
replay was regenerated with interventions recorded; the one it replaces was made before
the exact KV-cache reuse). Not a test: run once, before the old file is replaced, and
commit its JSON so the docs' sentence is generated from it, never typed in.

    python -m docs.generate.regen_changes OLD NEW REVISION > tests/reference/regen_<name>.json

OLD and NEW are replays of the same task and items, NEW already at its committed path in
this checkout; REVISION is the git revision that holds OLD at that same path (so it can be
read back: `git show REVISION:<path>`). Per arm: items whose
text is byte-identical, items whose text changed, and each replay's accuracy as vbw
scores it (a fresh `python -m vbw` per replay, report.json only).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _texts(path: Path) -> tuple[str, dict[str, dict[str, str | None]]]:
    from vbw.replay import read_replay

    replay = read_replay(path)
    return replay.header.task, {r.id: {k: a.text for k, a in r.arms.items()}
                                for r in replay.records}


def _accuracy(task: str, path: Path) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "vbw", f"task={task}", f"replay={path}",
                        "outputs=[json]", f"hydra.run.dir={out}"], check=True,
                       capture_output=True, cwd=ROOT)
        report = json.loads((Path(out) / "report.json").read_text(encoding="utf-8"))
    return {k: {"accuracy": a["answer_accuracy"]["rate"],
                "validity": (a.get("schema_validity") or {}).get("rate")}
            for k, a in report["arms"].items()}


def changes(old: Path, new: Path, revision: str) -> dict[str, Any]:
    task, before = _texts(old)
    task_new, after = _texts(new)
    if task != task_new or set(before) != set(after):
        raise SystemExit(f"{old} and {new} do not hold the same task and items")
    arms: dict[str, dict[str, Any]] = {}
    for key in next(iter(after.values())):
        same = sum(before[i].get(key) == after[i][key] for i in after)
        arms[key] = {"items": len(after), "same": same, "changed": len(after) - same}
    acc_old, acc_new = _accuracy(task, old), _accuracy(task, new)
    for key, a in arms.items():
        a["before"], a["after"] = acc_old.get(key), acc_new.get(key)
    any_changed = sum(any(before[i].get(k) != t for k, t in after[i].items()) for i in after)
    return {"task": task, "path": str(new.relative_to(ROOT)),
            "old": {"revision": revision, "sha256": hashlib.sha256(old.read_bytes()).hexdigest()},
            "new_sha256": hashlib.sha256(new.read_bytes()).hexdigest(),
            "items_with_a_changed_text": any_changed, "arms": arms}


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    print(json.dumps(changes(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(),
                             sys.argv[3]), indent=1))
