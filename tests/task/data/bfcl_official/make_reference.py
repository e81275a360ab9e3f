"""Make reference.json: BFCL's own checker on vbw's extracted arguments (see README.md here).

Not a test and not part of vbw: it imports `bfcl_eval` from a BFCL checkout given on
PYTHONPATH (nothing of BFCL is copied here). From the vbw root:

    PYTHONPATH=$PWD:/path/to/bfcl_pkg python tests/task/data/bfcl_official/make_reference.py \
        > tests/task/data/bfcl_official/reference.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import simple_function_checker

from vbw.replay import read_replay
from vbw.task.arms import ALL_ARM_KINDS, ARM_KINDS, task_arms
from vbw.task.runner import load_task

ROOT = Path(__file__).resolve().parents[4]
MODEL_NAME = "vbw_replay"  # BFCL reads "vbw/replay" in MODEL_CONFIG_MAPPING (README.md)


def verdicts(path: Path) -> dict[str, dict[str, str]]:
    """Per arm, item id -> "right" or BFCL's error_type ("no_arguments": vbw extracted none)."""
    task = load_task(ROOT / "conf" / "task" / "bfcl_simple.yaml")
    replay = read_replay(path)
    held = replay.header.arms  # the arms the replay holds (a server's tool_call run: 3)
    kinds = ALL_ARM_KINDS if held else ARM_KINDS  # a legacy header lists none: the standard
    arms = [a for a in task_arms(task.schema_names, task.spec.answer_schema, list(kinds))
            if not held or a.key in held]
    items = {it.id: it for it in task.items(None, only={r.id for r in replay.records})}
    out: dict[str, dict[str, str]] = {a.key: {} for a in arms}
    for rec in replay.records:
        item = items.get(rec.id)
        if item is None or rec.unsupported:
            continue  # vbw excludes these from N too
        func = item.fields["function"]
        for arm in arms:
            args = task.extract(rec.arms[arm.key].text, item, arm.kind == "unconstrained").answer
            if not isinstance(args, dict):
                out[arm.key][rec.id] = "no_arguments"
                continue
            r = simple_function_checker(func, {func["name"]: args}, {func["name"]: item.gold},
                                        Language.PYTHON, MODEL_NAME)
            out[arm.key][rec.id] = "right" if r["valid"] else r["error_type"]
    return out


def main() -> None:
    result = {}
    for path in sorted((ROOT / "replays" / "bfcl_simple").glob("*/*.jsonl")):
        arms = {}
        for arm, per_item in verdicts(path).items():
            right = [i for i, v in per_item.items() if v == "right"]
            arms[arm] = {"n": len(per_item), "right": len(right),
                         "accuracy": round(len(right) / len(per_item), 4) if per_item else None,
                         "right_ids": right,
                         "bfcl_error_types": dict(Counter(v for v in per_item.values()
                                                          if v != "right").most_common())}
        result[str(path.relative_to(ROOT))] = arms
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
