"""The README's figures, generated from committed files (replays, benchmark JSON).

    python -m tests.readme_blocks          # rewrite the marked blocks in README.md
    python -m tests.readme_blocks --check  # exit 1 if README.md is stale

Blocks sit between `<!-- BEGIN name -->` and `<!-- END name -->`; tests/test_readme.py
fails when one differs from what this module generates, so no figure is typed by hand.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCH = Path(__file__).resolve().parent / "benchmarks"


def _score(task_name: str, model: str, engine: str):
    from vbw.config import Bootstrap
    from vbw.replay import read_replay
    from vbw.report.provenance import provenance
    from vbw.score.metrics import build_report
    from vbw.score.states import score_items
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    task = load_task(ROOT / "conf" / "task" / f"{task_name}.yaml")
    replay = read_replay(ROOT / "replays" / task_name / model / f"{engine}.jsonl")
    held = {r.id for r in replay.records}
    task_ids = task.ids(None)
    items = task.items(None, only=held)
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    states = score_items(task, items, replay, arms)
    b = Bootstrap()
    return build_report(states, task=task.name, label=task.spec.label, mode="replay",
                        meta=replay.meta_as_written, source=str(replay.path),
                        provenance=provenance(replay.header, replay.records, replay.end),
                        seed=b.seed, resamples=b.resamples,
                        n_task=len(task_ids), missing=[i for i in task_ids if i not in held])


def _capped(task_name: str, model: str, engine: str) -> str:
    """Per arm, how many generations stopped at the token cap (v1 replays record it)."""
    from vbw.replay import read_replay

    replay = read_replay(ROOT / "replays" / task_name / model / f"{engine}.jsonl")
    counts: dict[str, int] = {}
    for rec in replay.records:
        for key, arm in rec.arms.items():
            if arm.finish_reason == "length":
                counts[key] = counts.get(key, 0) + 1
    if replay.header.version < 1:
        return ""
    listed = ", ".join(f"`{k}` {v}" for k, v in counts.items()) or "none"
    return f" Generations cut off by the token cap (finish_reason=length): {listed}."


def demo_table(task_name: str, model: str, engine: str) -> str:
    from vbw.report.markdown import rate_cell

    r = _score(task_name, model, engine)
    lines = [f"| arm | schema validity | {r.correctness_label} | wrong-but-valid |",
             "|---|---|---|---|"]
    for key, m in r.arms.items():
        lines.append(f"| `{key}` | {rate_cell(m.schema_validity)} | "
                     f"{rate_cell(m.answer_accuracy)} | {rate_cell(m.wrong_but_valid)} |")
    lines.append("")
    for c in r.comparisons:
        d = c.deltas["answer_accuracy"]
        effect = (f"{100 * d.delta:+.1f} pts" if d.excludes_0
                  else f"no detectable effect at N={r.n}")
        lines.append(f"- `{c.from_}` → `{c.to}`: {r.correctness_label} {effect} "
                     f"[{100 * d.ci95[0]:+.1f}, {100 * d.ci95[1]:+.1f}]; "
                     f"{c.flips.wrong_to_right} wrong→right, {c.flips.right_to_wrong} right→wrong")
    excl = f" Excluded (schema the engine could not compile): {r.excluded.n}." if r.excluded.n else ""
    lines.append("")
    lines.append(f"N={r.n}. Source: `replays/{task_name}/{model}/{engine}.jsonl`, "
                 f"{r.provenance}.{excl}{_capped(task_name, model, engine)}")
    return "\n".join(lines)


def bench_scoring() -> str:
    data = json.loads((BENCH / "scoring.json").read_text())
    d = data["demo_both_tasks"]
    m = data["machine"]
    lines = [f"Measured {data['measured']} on this project's reference machine "
             f"({m['cores']} cores, {m['cpu']}, Python {m['python']}) by "
             "`python -m tests.benchmarks.bench_scoring`:", "",
             "| what | wall (s) | peak RSS (MiB) |", "|---|---|---|",
             f"| `vbw` (both demos, N=200 each, fresh process; median of {d['runs']}) | "
             f"{d['median_wall_s']:.2f} | {d['peak_rss_mib']:.0f} |"]
    for s in data["synthetic"]:
        lines.append(f"| `vbw` on a synthetic replay, {s['items']:,} items x {s['arms']} arms | "
                     f"{s['wall_s']:.1f} | {s['peak_rss_mib']:.0f} |")
    if "median_import_s" in d:
        lines += ["", f"Of the demo's {d['median_wall_s']:.2f} s, {d['median_import_s']:.2f} s is "
                  "starting Python and importing vbw's CLI and pipeline (pydantic, Hydra/OmegaConf, "
                  f"NumPy, jsonschema; a bare interpreter starts in {d['median_bare_python_s']:.2f} s)."]
    syn = data["synthetic"]
    if len(syn) >= 2:
        a, b = syn[0], syn[-1]
        lines += ["", f"From {a['items']:,} to {b['items']:,} items ({b['items'] / a['items']:.0f}x) "
                  f"the wall time grows {b['wall_s'] / a['wall_s']:.1f}x: linear in items "
                  f"(about {1e6 * (b['wall_s'] - a['wall_s']) / ((b['items'] - a['items']) * b['arms']):.0f} µs "
                  "per item and arm, mostly JSON decoding and jsonschema validation)."]
    return "\n".join(lines)


def blocks() -> dict[str, Callable[[], str]]:
    out: dict[str, Callable[[], str]] = {
        "qwen-bfcl": lambda: demo_table("bfcl_simple", "qwen2_5_0_5b", "outlines"),
        "qwen-gsm8k": lambda: demo_table("gsm8k", "qwen2_5_0_5b", "outlines"),
        "bench-scoring": bench_scoring,
    }
    for task in ("bfcl_simple", "gsm8k"):
        for engine in ("outlines", "llamacpp"):
            out[f"smollm2-{task}-{engine}"] = (
                lambda t=task, e=engine: _if_exists(
                    ROOT / "replays" / t / "smollm2_135m" / f"{e}.jsonl",
                    lambda: f"#### {t}, {e} engine\n\n" + demo_table(t, "smollm2_135m", e)))
    out["bench-live"] = lambda: _if_exists(BENCH / "live.json", _live)
    out["example-task"] = _example_task
    out["bench-server"] = lambda: _if_exists(BENCH / "server.json", _server)
    out["bench-hostile"] = lambda: _if_exists(BENCH / "hostile.json", _hostile)
    out["html-size"] = lambda: _if_exists(BENCH / "html.json", _html_size)
    return out


def _html_size() -> str:
    """report.html's size on every bundled replay and in the worst case, from html.json."""
    d = json.loads((BENCH / "html.json").read_text(encoding="utf-8"))
    lines = ["| replay | items | replay size | report.html | per item |", "|---|---|---|---|---|"]
    for r in [*d["bundled"], d["worst_case"]]:
        lines.append(f"| `{r['replay']}` | {r['items']} | {r['replay_bytes'] / 1e6:,.2f} MB | "
                     f"{r['html_bytes'] / 1e6:,.2f} MB | {r['bytes_per_item'] / 1e3:,.1f} kB |")
    w = d["worst_case"]
    return "\n".join(lines) + (
        f"\n\nMeasured {d['measured']}. The last row is the cap at work: {w['texts']:,} texts "
        f"of 1 MB each ({w['replay_bytes'] / 1e9:.1f} GB of replay) embed as "
        f"{d['max_text_chars']:,} characters each.")


def _server() -> str:
    """The server benchmark and the agreement between backends, from server.json."""
    r = json.loads((BENCH / "server.json").read_text(encoding="utf-8"))
    s, a, c = r["s_per_item"], r["agreement_in_process_vs_server"], r["agreement_server_c1_vs_c3"]
    n = a["items"]
    arms = [k for k in a if k != "items"]
    rows = "\n".join(f"| `{k}` | {a[k]} of {n} | {c[k]} of {c['items']} |" for k in arms)
    return (f"SmolLM2-135M-Instruct Q4_1 on {r['cpu']} ({r['threads']} threads), first "
            f"{r['items']} BFCL simple items, all four arms, caps 384, greedy; measured "
            f"{r['measured']} by `python -m tests.benchmarks.bench_server`:\n\n"
            "| backend | s/item |\n|---|---|\n"
            f"| in-process (`llamacpp` engine) | {s['in_process']} |\n"
            f"| llama-cpp-python server, concurrency 1 | {s['server_c1']} |\n"
            f"| llama-cpp-python server, concurrency 3 | {s['server_c3']} |\n\n"
            "| arm | identical texts, in-process vs server | server, concurrency 1 vs 3 |\n"
            f"|---|---|---|\n{rows}\n\n"
            f"Excluded (schema not enforceable): in-process {r['excluded_in_process'] or 'none'}, "
            f"server {r['excluded_server'] or 'none'}.")


def _example_task() -> str:
    """The example user task, verbatim, so the README's complete example cannot drift."""
    text = (ROOT / "examples/qa/task/capitals.yaml").read_text(encoding="utf-8")
    return f"```yaml\n{text}```"


def _live() -> str:
    from tests.benchmarks.live_table import live_table

    return live_table()


def _hostile() -> str:
    from tests.benchmarks.hostile_table import hostile_table

    return hostile_table()


def _if_exists(path: Path, make: Callable[[], str]) -> str:
    if path.is_file():
        return make()
    return f"_Not generated yet: `{path.relative_to(ROOT)}` does not exist._"


def render(text: str) -> str:
    for name, make in blocks().items():
        pattern = re.compile(rf"(<!-- BEGIN {re.escape(name)} -->\n).*?(<!-- END {re.escape(name)} -->)",
                             re.DOTALL)
        if pattern.search(text):
            body = make()
            text = pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> int:
    current = README.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in sys.argv:
        return 0 if fresh == current else 1
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
