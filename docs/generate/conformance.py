"""docs/results.md's conformance blocks for the bundled tasks: each engine's rejections of
gold-shaped answers (tests/benchmarks/conformance.json, bench_conformance's run) and the
committed SmolLM2 replays' constrained accuracy split by them: on the items an engine
rejects, under that engine and under the others, against the rest."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPLAYS = {"bfcl_simple": ("outlines", "outlines-compact", "llamacpp", "llguidance"),
           "gsm8k": ("outlines", "llamacpp", "llguidance-k1")}


def _accuracy(states, ids: set[str], arm: str) -> tuple[int, int] | None:
    """Right and scored among `ids` on `arm` (None: the replay has no such arm)."""
    j = next((i for i, a in enumerate(states.arms) if a.key == arm), None)
    if j is None:
        return None
    rows = [i for i, x in enumerate(states.ids) if x in ids]
    return int(states.right[rows, j].sum()), len(rows)


def _cell(got: tuple[int, int] | None) -> str:
    if got is None:
        return "no such arm"
    right, n = got
    return "no item" if n == 0 else f"{right}/{n} ({100 * right / n:.1f}%)"


def rejections_block(task: str) -> str:
    """Per engine configuration: the items whose gold-shaped answer it rejects (and the
    schemas it cannot compile), then each committed replay's constrained accuracy on
    those items against the others."""
    from docs.generate.sampled import _scored
    from tests.benchmarks.conformance_table import _runs, task_table

    engines = _runs()[task]["report"]["engines"]
    scored = {}
    for name in REPLAYS[task]:
        path = ROOT / "replays" / task / "smollm2_135m" / f"{name}.jsonl"
        if path.is_file():
            states, _, head = _scored(path)
            scored[name] = (states, head)
    out = [task_table(task), "", "Gold-shaped answers an engine rejects, and the "
           "constrained arm's accuracy on those items in each committed replay (the replay's "
           "engine and whitespace in its name) against its accuracy on the other items "
           "(engines that reject none are left out):", ""]
    names = list(scored)
    schemas = [a.schema for a in next(iter(scored.values()))[0].arms
               if a.key.startswith("constrained[")]
    out += ["| engine | schema | rejects (items) | "
            + " | ".join(f"`{n}` on them" for n in names) + " | "
            + " | ".join(f"`{n}` on the rest" for n in names) + " |",
            "|---" * (3 + 2 * len(names)) + "|"]
    rows = [_row(e, schema, names, scored) for e in engines for schema in schemas]
    rows = [r for r in rows if r is not None]
    if rows:
        out += rows
    else:
        out = out[:-2] + [
            "No engine rejects the gold-shaped answer of any of these items, in either "
            "whitespace policy: on these schemas a constrained arm never forces the model "
            "away from the answer's own text. Each replay's constrained accuracy, for "
            "reference: " + "; ".join(
                f"`{n}` {a.key} {_cell(_accuracy(scored[n][0], set(scored[n][0].ids), a.key))}"
                for n in names for a in scored[n][0].arms
                if a.key.startswith("constrained[")) + "."]
    refused = [f"{e['label']}: {sum(not s['compiled'] for s in e['schemas'])}" for e in engines
               if any(not s["compiled"] for s in e["schemas"])]
    if refused:
        out += ["", "Schemas an engine cannot compile (their items are excluded from that "
                "engine's replay): " + "; ".join(refused) + "."]
    return "\n".join(out)


def _row(e: dict, schema: str, names: list[str], scored: dict) -> str | None:
    cut = [f for f in e["findings"] if f["kind"] == "rejected valid" and f["keyword"] == "gold"
           and f["category"] == schema]
    rejected = list(dict.fromkeys(i for f in cut for i in f["items"]))
    if not rejected:
        return None
    more = " (findings listed: the first of them)" if e["findings_total"] > len(e["findings"]) \
        else ""
    shown = ", ".join(rejected[:5]) + (f", +{len(rejected) - 5} more" if len(rejected) > 5
                                       else "")
    on, rest = [], []
    for n in names:
        states, _ = scored[n]
        arm = f"constrained[{schema}]"
        on.append(_cell(_accuracy(states, set(rejected), arm)))
        rest.append(_cell(_accuracy(states, set(states.ids) - set(rejected), arm)))
    return (f"| {e['label']} | `{schema}` | {len(rejected)}{more}"
            + (f": {shown}" if rejected else "") + " | " + " | ".join(on) + " | "
            + " | ".join(rest) + " |")
