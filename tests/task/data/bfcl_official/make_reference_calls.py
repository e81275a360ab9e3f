"""Make reference_calls.json: BFCL's own checker on the calls vbw extracts from the committed
replays of bfcl_multiple, bfcl_parallel and bfcl_parallel_multiple (see README.md here).

Not a test and not part of vbw: it imports `bfcl_eval` from a BFCL checkout given on
PYTHONPATH, prepared as for make_reference.py (nothing of BFCL is copied here). From the
vbw root:

    PYTHONPATH=$PWD:/path/to/bfcl_pkg python tests/task/data/bfcl_official/make_reference_calls.py \
        > tests/task/data/bfcl_official/reference_calls.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

from vbw.replay import read_replay
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.runner import load_task

ROOT = Path(__file__).resolve().parents[4]
MODEL_NAME = "vbw_replay"  # BFCL reads "vbw/replay" in MODEL_CONFIG_MAPPING (README.md)
TASKS = ("bfcl_multiple", "bfcl_parallel", "bfcl_parallel_multiple")


def verdicts(task_name: str, path: Path) -> dict[str, dict[str, str]]:
    """Per arm, item id -> "right" or BFCL's error_type ("no_calls": vbw extracted no list
    of calls; "raised": BFCL's checker raised on what vbw extracted)."""
    task = load_task(ROOT / "conf" / "task" / f"{task_name}.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    replay = read_replay(path)
    items = {it.id: it for it in task.items(None, only={r.id for r in replay.records})}
    category = task_name.removeprefix("bfcl_")
    out: dict[str, dict[str, str]] = {a.key: {} for a in arms}
    for rec in replay.records:
        item = items.get(rec.id)
        if item is None or rec.unsupported:
            continue  # vbw excludes these from N too
        for arm in arms:
            calls = task.extract(rec.arms[arm.key].text, item, arm.kind == "unconstrained").answer
            if not isinstance(calls, list):
                out[arm.key][rec.id] = "no_calls"
                continue
            try:
                r = ast_checker(item.fields["functions"], calls, item.gold, Language.PYTHON,
                                category, MODEL_NAME)
            except Exception:  # noqa: BLE001 - e.g. a call that is not an object
                out[arm.key][rec.id] = "raised"
                continue
            out[arm.key][rec.id] = "right" if r["valid"] else r["error_type"]
    return out


def main() -> None:
    result = {}
    for task_name in TASKS:
        for path in sorted((ROOT / "replays" / task_name).glob("*/*.jsonl")):
            arms = {}
            for arm, per_item in verdicts(task_name, path).items():
                right = [i for i, v in per_item.items() if v == "right"]
                arms[arm] = {"n": len(per_item), "right": len(right),
                             "accuracy": round(len(right) / len(per_item), 4) if per_item
                             else None, "right_ids": right,
                             "bfcl_error_types": dict(Counter(
                                 v for v in per_item.values() if v != "right").most_common())}
            result[str(path.relative_to(ROOT))] = {"task": task_name, "arms": arms}
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
