"""The figures of README.md and docs/, generated from committed files (replays, benchmark
JSON), and the task reference generated from vbw's models.

    python -m docs.generate          # rewrite the marked blocks in README.md and docs/**.md
    python -m docs.generate --check  # exit 1 if one of them is stale

Blocks sit between `<!-- BEGIN name -->` and `<!-- END name -->`; tests/test_readme.py
fails when one differs from what this module generates, so no figure is typed by hand.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# files whose marked blocks are generated: the README and every page under docs/
GENERATED = [README, *sorted(DOCS.rglob("*.md"))]
BENCH = ROOT / "tests" / "benchmarks"


def testing_block() -> str:
    from docs.generate.testing import block

    return block()


def _score(task_name: str, model: str, engine: str, kinds: list[str] | None = None):
    from vbw.config import Bootstrap
    from vbw.replay import read_replay
    from vbw.report.provenance import provenance
    from vbw.score.metrics import build_report
    from vbw.replay.stream import open_replay
    from vbw.score.stream import score_stream
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    task = load_task(ROOT / "conf" / "task" / f"{task_name}.yaml")
    replay = read_replay(ROOT / "replays" / task_name / model / f"{engine}.jsonl")
    held = {r.id for r in replay.records}
    task_ids = task.ids(None)
    arms = task_arms(task.schema_names, task.spec.answer_schema, kinds or list(ARM_KINDS))
    states = score_stream(task, open_replay(Path(replay.path)), arms, None, io.StringIO()).states
    b = Bootstrap()
    return build_report(states, task=task.name, label=task.spec.label, mode="replay",
                        meta=replay.meta_as_written, source=str(replay.path),
                        provenance=provenance(replay.header, [x.item_seconds for x in replay.records], replay.end),
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


# the blocks that show the fields section too (every report.md has it; results.md keeps
# one BFCL engine's and the ticket example's)
FIELD_BLOCKS = {("bfcl_simple", "outlines"), ("ticket", "outlines"), ("ticket", "llamacpp")}


def demo_table(task_name: str, model: str, engine: str, kinds: list[str] | None = None) -> str:
    from vbw.report.markdown import rate_cell
    from vbw.report.verdict import verdict

    r = _score(task_name, model, engine, kinds)
    lines = [f"| arm | schema validity | {r.correctness_label} | wrong-but-valid |",
             "|---|---|---|---|"]
    for key, m in r.arms.items():
        lines.append(f"| `{key}` | {rate_cell(m.schema_validity)} | "
                     f"{rate_cell(m.answer_accuracy)} | {rate_cell(m.wrong_but_valid)} |")
    lines.append("")
    for c in r.comparisons:
        d = c.deltas["answer_accuracy"]
        # McNemar decides, worded as in report.md, the CI right after the change
        lines.append(f"- `{c.from_}` → `{c.to}`: {r.correctness_label} "
                     f"{verdict(d, r.n, ci=True)}; "
                     f"{c.flips.wrong_to_right} wrong→right, {c.flips.right_to_wrong} right→wrong")
    from docs.generate.interventions import results_lines
    from vbw.report.fields import markdown_lines as field_lines

    lines += results_lines(r)
    if (task_name, engine) in FIELD_BLOCKS and model == "smollm2_135m":
        lines += demote("\n".join(field_lines(r)), 3).splitlines()
    excl = f" Excluded (schema the engine could not compile): {r.excluded.n}." if r.excluded.n else ""
    lines.append("")
    lines.append(f"N={r.n}. Source: `replays/{task_name}/{model}/{engine}.jsonl`, "
                 f"{r.provenance}.{excl}{_capped(task_name, model, engine)}")
    return "\n".join(lines)


COMPARE_REPLAYS = ["replays/bfcl_simple/smollm2_135m/outlines.jsonl",
                   "replays/bfcl_simple/smollm2_135m/llamacpp.jsonl",
                   "replays/bfcl_simple/smollm2_135m/llguidance.jsonl",
                   "replays/bfcl_simple/smollm2_135m/outlines-compact.jsonl"]


def demote(md: str, levels: int = 2) -> str:
    """A report's headings, moved down to sit inside a README section."""
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + levels) + " ", md,
                  flags=re.MULTILINE)


def compare_block() -> str:
    """The README's mode=compare command and the report.md it writes (headings demoted)."""
    import io

    from vbw.modes.compare import compare_replays
    from vbw.config import Bootstrap
    from vbw.report.compare import render_compare
    from vbw.task.arms import ARM_KINDS
    from vbw.task.runner import load_task

    b = Bootstrap()
    r = compare_replays(load_task(ROOT / "conf" / "task" / "bfcl_simple.yaml"),
                        [ROOT / p for p in COMPARE_REPLAYS], COMPARE_REPLAYS,
                        kinds=list(ARM_KINDS), n=None, allow_task_change=False, seed=b.seed,
                        resamples=b.resamples, err=io.StringIO())
    command = f"vbw mode=compare task=bfcl_simple 'replays=[{','.join(COMPARE_REPLAYS)}]'"
    return f"```bash\n{command}\n```\n\n" + demote(render_compare(r)).rstrip("\n")


def bench_scoring() -> str:
    from tests.benchmarks.scoring_table import scoring_table

    return scoring_table()


def blocks() -> dict[str, Callable[[], str]]:
    out: dict[str, Callable[[], str]] = {
        "qwen-bfcl": lambda: demo_table("bfcl_simple", "qwen2_5_0_5b", "outlines"),
        "qwen-gsm8k": lambda: demo_table("gsm8k", "qwen2_5_0_5b", "outlines"),
        "bench-scoring": bench_scoring,
        "compare-smollm2-bfcl": compare_block,
    }
    engines = {"bfcl_simple": ("outlines", "llamacpp", "llguidance", "outlines-compact"),
               "gsm8k": ("outlines", "llamacpp"), "ticket": ("outlines", "llamacpp"),
               "bfcl_multiple": ("llguidance",),
               "bfcl_parallel": ("llguidance",), "bfcl_parallel_multiple": ("llguidance",)}
    for task in engines:
        for engine in engines[task]:
            out[f"smollm2-{task}-{engine}"] = (
                lambda t=task, e=engine: _if_exists(
                    ROOT / "replays" / t / "smollm2_135m" / f"{e}.jsonl",
                    lambda: f"#### {t}, {_engine_title(e)}\n\n"
                    + demo_table(t, "smollm2_135m", e) + _against_flexible(t, e)
                    + _regenerated(t, e)))
    out["smollm2-bfcl_simple-tools"] = lambda: _if_exists(
        ROOT / "replays" / "bfcl_simple" / "smollm2_135m" / "server-llama_cpp_python.jsonl",
        _tools)
    from docs.generate import sampled
    for task, (greedy, k) in sampled.REPLAYS.items():
        out[f"sampled-{task}"] = (lambda t=task, g=greedy, s=k: _if_exists(
            ROOT / "replays" / t / "smollm2_135m" / s, lambda: sampled.block(t, g, s)))
    out["bench-live"] = lambda: _if_exists(BENCH / "live.json", _live)
    out["bench-batched"] = lambda: _if_exists(BENCH / "batched.json", _batched)
    out["conformance-suite"] = lambda: _if_exists(BENCH / "conformance.json", _suite)
    out["bench-conformance"] = lambda: _if_exists(BENCH / "conformance.json", _masks)
    for task in ("bfcl_simple", "gsm8k"):
        out[f"conformance-{task}"] = (lambda t=task: _if_exists(
            BENCH / "conformance.json", lambda: _rejections(t)))
    out["example-task"] = _example_task
    out["bench-server"] = lambda: _if_exists(BENCH / "server.json", _server)
    out["bench-hostile"] = lambda: _if_exists(BENCH / "hostile.json", _hostile)
    out["html-size"] = lambda: _if_exists(BENCH / "html.json", _html_size)
    out["bench-startup"] = lambda: _if_exists(BENCH / "startup.json", _startup)
    out["bench-sweep"] = lambda: _if_exists(BENCH / "sweep.json", _sweep)
    out["bench-side-by-side"] = lambda: _if_exists(BENCH / "side_by_side.json", _side_by_side)
    out["bench-predecessor"] = lambda: _if_exists(BENCH / "predecessor.json", _predecessor)
    out["bfcl-side-by-side"] = _bfcl_side_by_side
    out["testing-figures"] = lambda: _if_exists(BENCH / "testing.json", testing_block)
    out["task-reference"] = _task_reference
    out["config-reference"] = _config_reference
    out["plugin-groups"] = _plugin_groups
    out["intervention-example"] = _intervention_example
    out["import-contracts"] = _import_contracts
    out["fork-lines"] = _fork_lines
    return out


def _suite() -> str:
    from tests.benchmarks.conformance_table import suite_block

    return suite_block()


def _masks() -> str:
    from tests.benchmarks.conformance_table import mask_block

    return mask_block()


def _rejections(task: str) -> str:
    from docs.generate.conformance import rejections_block

    return rejections_block(task)


def _fork_lines() -> str:
    from docs.generate.forklines import block

    return block()


def _import_contracts() -> str:
    from docs.generate.contracts import contracts_table

    return contracts_table()


def _tools() -> str:
    """The tool path against response_format on the same items (issue 20), from the
    committed server replay: the scored table, then how many arguments were identical."""
    from vbw.replay import read_replay

    engine = "server-llama_cpp_python"
    replay = read_replay(ROOT / "replays" / "bfcl_simple" / "smollm2_135m" / f"{engine}.jsonl")
    same = sum(r.arms["constrained[arguments]"].text == r.arms["tool_call[arguments]"].text
               for r in replay.records)
    called = sum(r.arms["tool_call[arguments]"].text is not None for r in replay.records)
    caps = replay.header.max_tokens
    return (demo_table("bfcl_simple", "smollm2_135m", engine,
                       ["prompt_json", "constrained", "tool_call"])
            + f"\n\nThe forced call was made on {called} of {len(replay.records)} items. "
            f"`constrained[arguments]` and `tool_call[arguments]` wrote byte-identical "
            f"arguments on {same} of {len(replay.records)} items. Token cap per JSON arm: "
            f"{caps['json'] if caps else 'unrecorded'}.")


def _intervention_example() -> str:
    from docs.generate.interventions import intervention_example

    return intervention_example()


def _plugin_groups() -> str:
    from docs.generate.reference import plugin_groups

    return plugin_groups()


def _task_reference() -> str:
    from docs.generate.reference import task_reference

    return task_reference()


def _config_reference() -> str:
    from docs.generate.reference import config_reference

    return config_reference()


def _bfcl_side_by_side() -> str:
    from docs.generate.bfcl import side_by_side

    return side_by_side()


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


def _regenerated(task_name: str, engine: str) -> str:
    from docs.generate.interventions import regenerated_note

    return regenerated_note() if (task_name, engine) == ("bfcl_simple", "outlines") else ""


def _engine_title(engine: str) -> str:
    name, _, ws = engine.partition("-")
    return f"{name} engine" + (f", {ws} whitespace" if ws else "")


def _against_flexible(task_name: str, engine: str) -> str:
    """For a replay beside the outlines/llamacpp pair: what it changes, counted from the
    replays (items the GBNF engine excludes, constrained arms cut off by the cap)."""
    if engine in ("outlines", "llamacpp") or not (
            ROOT / "replays" / task_name / "smollm2_135m" / "llamacpp.jsonl").exists():
        return ""
    from vbw.replay import read_replay

    def read(e: str):
        return read_replay(ROOT / "replays" / task_name / "smollm2_135m" / f"{e}.jsonl")

    this, outlines, gbnf = read(engine), read("outlines"), read("llamacpp")
    refused = [r.id for r in gbnf.records if any(a.unsupported_schema for a in r.arms.values())]
    here = {r.id: r for r in this.records}
    scored = [i for i in refused if i in here
              and not any(a.unsupported_schema for a in here[i].arms.values())]

    def cut(replay) -> int:
        return sum(1 for r in replay.records for k, a in r.arms.items()
                   if k.startswith("constrained[") and a.finish_reason == "length")

    return (f"\n\nAgainst the flexible pair: of the {len(refused)} item(s) the `llamacpp` "
            f"engine excludes ({', '.join(refused) or 'none'}), {len(scored)} are generated "
            f"and scored here; `constrained[*]` generations cut off by the token cap: "
            f"{cut(this)} here, {cut(outlines)} under `outlines` (flexible), {cut(gbnf)} "
            "under `llamacpp`.")


def _predecessor() -> str:
    """vbw against validbutwrong 0.1.1 on the same items, from predecessor.json."""
    d = json.loads((BENCH / "predecessor.json").read_text(encoding="utf-8"))
    old, new = d["predecessor"], d["vbw"]
    share = d["identical"] / d["generations"] if d["generations"] else 0.0
    return (f"First {d['items']} BFCL simple items, all four arms, SmolLM2-135M on "
            f"{d['threads']} threads, {d['engine']} engine, measured {d['measured']} by "
            "`python -m tests.benchmarks.bench_predecessor` (the two one after the other):\n\n"
            "| | s/item (wall, fresh process) | s/item (generation, from the replay) |\n"
            "|---|---|---|\n"
            f"| validbutwrong 0.1.1 | {old['s_per_item']} | {old['generation_s_per_item']} |\n"
            f"| vbw | {new['s_per_item']} | {new['generation_s_per_item']} |\n"
            f"| speed-up | {d['speedup']}x | {d['generation_speedup']}x |\n\n"
            f"Identical generations (item x arm, byte for byte): {d['identical']} of "
            f"{d['generations']} ({100 * share:.0f}%). Targets (issue 10): at least 1.5x "
            f"faster ({'met' if d['speedup'] >= 1.5 else 'MISSED'}: {d['speedup']}x) with at "
            f"least 90% identical ({'met' if share >= 0.9 else 'MISSED'}).")


def _sweep() -> str:
    """Parallel sweep and shards vs one job at a time, from sweep.json."""
    d = json.loads((BENCH / "sweep.json").read_text(encoding="utf-8"))
    s, h, c = d["sweep"], d["shards"], d["bench_cores"]
    return (f"SmolLM2-135M-Instruct Q4_1 on {d['cpu']} ({d['cores']} cores), `arms=headline`, "
            f"first {d['items']} items per job, greedy; measured {d['measured']} by "
            "`python -m tests.benchmarks.bench_sweep` (wall seconds of the whole `vbw` command, "
            f"model loads and canaries included; 1-minute load average {d['load_average']:.2f} "
            "after):\n\n"
            "| what | one job at a time | in parallel | speed-up |\n|---|---|---|---|\n"
            f"| {s['jobs']}-job sweep (2 tasks x 2 engines) | {s['serial_s']} s (basic launcher, "
            f"threads={c}) | {s['joblib_s']} s (joblib, {c} jobs, threads=1) | {s['speedup']}x |\n"
            f"| one bfcl_simple run (llamacpp) | {h['whole_s']} s (one job, threads={c}) | "
            f"{h['sharded_s']} s ({h['count']} shards under joblib, threads=1, merged) | "
            f"{h['speedup']}x |")


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


def _batched() -> str:
    from tests.benchmarks.batched_table import batched_block

    return batched_block()


def _live() -> str:
    from tests.benchmarks.live_table import live_table

    return live_table()


def _startup() -> str:
    from tests.benchmarks.startup_table import startup_table

    return startup_table()


def _side_by_side() -> str:
    from tests.benchmarks.side_by_side_table import side_by_side_table

    return side_by_side_table()


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
    stale = False
    for path in GENERATED:
        current = path.read_text(encoding="utf-8")
        fresh = render(current)
        if "--check" in sys.argv:
            stale |= fresh != current
        else:
            path.write_text(fresh, encoding="utf-8")
    return int(stale)
