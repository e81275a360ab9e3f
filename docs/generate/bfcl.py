"""docs/bfcl.md's side-by-side figure: every committed BFCL replay scored under both
`call_args` rule sets, and the items on which they disagree, counted per reason.

Generated like the README's blocks (docs/generate/blocks.py writes and checks it), so no
figure in docs/bfcl.md is typed by hand.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


Verdict = tuple[str, bool, str | None, str]


def _simplified_reason(answer: object, gold: object) -> str:
    """Why the simplified rules call wrong what BFCL calls right: an optional parameter
    answered by "" (BFCL normalises its "" marker as an allowed string), else "other"."""
    if isinstance(answer, dict) and isinstance(gold, dict) and any(
            v == "" and isinstance(gold.get(p), list) and "" in gold[p]
            for p, v in answer.items()):
        return 'optional given as ""'
    return "other"


def _verdicts(path: Path) -> dict[str, list[Verdict]]:
    """Per arm: (item id, right under simplified, BFCL's reason or None when right,
    simplified's reason when only BFCL calls it right)."""
    from vbw.replay import read_replay
    from vbw.task.arms import ALL_ARM_KINDS, parse_arm, task_arms
    from vbw.task.bfcl_rules import official_reason
    from vbw.task.runner import load_task

    task = load_task(ROOT / "conf" / "task" / "bfcl_simple.yaml")
    replay = read_replay(path)
    kinds = {parse_arm(k).kind for k in replay.records[0].arms}  # the arms it holds
    arms = task_arms(task.schema_names, task.spec.answer_schema,
                     [k for k in ALL_ARM_KINDS if k in kinds])
    items = {it.id: it for it in task.items(None, only={r.id for r in replay.records})}
    out: dict[str, list[Verdict]] = {a.key: [] for a in arms}
    for rec in replay.records:
        item = items.get(rec.id)
        if item is None or rec.unsupported:
            continue  # excluded from N, as vbw excludes it
        for arm in arms:
            answer = task.extract(rec.arms[arm.key].text, item, arm.kind == "unconstrained").answer
            reason = "not_arguments" if answer is None else official_reason(
                answer, item.gold, item.schemas[task.spec.answer_schema])
            out[arm.key].append((rec.id, task.is_correct(answer, item), reason,
                                 _simplified_reason(answer, item.gold)))
    return out


def _by_reason(rows: list[tuple[str, str]]) -> str:
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, reason in rows:
        groups[reason].append(item_id)
    return "; ".join(f"{reason} {len(ids)} ({', '.join(ids)})"
                     for reason, ids in sorted(groups.items())) or "none"


def side_by_side() -> str:
    lines = ["| replay | arm | simplified | bfcl_official | right only under simplified "
             "(BFCL's reason: items) | right only under bfcl_official (simplified's reason: items) |",
             "|---|---|---|---|---|---|"]
    for path in sorted((ROOT / "replays" / "bfcl_simple").glob("*/*.jsonl")):
        name = f"{path.parent.name}/{path.stem}"
        for arm, rows in _verdicts(path).items():
            n = len(rows)
            simp = sum(s for _, s, _, _ in rows)
            off = sum(r is None for _, _, r, _ in rows)
            lost = [(i, r) for i, s, r, _ in rows if s and r is not None]
            gained = [(i, why) for i, s, r, why in rows if not s and r is None]
            lines.append(f"| `{name}` | `{arm}` | {100 * simp / n:.1f}% ({simp}/{n}) | "
                         f"{100 * off / n:.1f}% ({off}/{n}) | {_by_reason(lost)} | "
                         f"{_by_reason(gained)} |")
    return "\n".join(lines)
