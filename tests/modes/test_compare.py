"""mode=compare through the real `vbw` entry point: scripted replays whose answers are
known (10 vs 2 discordant items), the committed SmolLM2 BFCL replays, the gate's exit 1
and every refusal as one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE, REPLAYS, ROOT, load_json, one_line_error, run_vbw
from vbw.task.runner import load_task

TASK = load_task(EXAMPLE / "task" / "capitals.yaml")
ARMS = ["unconstrained", "prompt_json[answer]", "constrained[answer]",
        "reason_then_constrain[answer]"]
SMOL = REPLAYS / "bfcl_simple" / "smollm2_135m"
GATE = 'compare.fail_if_worse="constrained[answer]:answer_accuracy"'


def _replay(path: Path, engine: str, right: set[int], *, ids: range = range(12),
            task_hash: str | None = None, arms: list[str] = ARMS) -> str:
    """A minimal v1 replay of the capitals task: constrained[answer] is right on the items
    in `right` and names a wrong city elsewhere; every other arm is right everywhere."""
    items = TASK.items(None)
    meta = {"format": "vbw-replay/1", "task": "capitals", "arms": arms, "engine": engine,
            "model": {"name": "scripted"}, "task_hash": task_hash or TASK.generation_hash()}
    lines = [json.dumps({"meta": meta})]
    for k in ids:
        city = items[k].gold
        texts = {"unconstrained": f"Answer: {city}", "reason_then_constrain[answer]":
                 json.dumps({"city": city}), "prompt_json[answer]": json.dumps({"city": city}),
                 "constrained[answer]": json.dumps({"city": city if k in right else "Atlantis"})}
        lines.append(json.dumps({"id": items[k].id,
                                 "arms": {a: {"text": texts[a]} for a in arms}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _compare(tmp_path: Path, *replays: str, extra: tuple[str, ...] = ()):
    out = tmp_path / "run"
    proc = run_vbw("--config-dir", str(EXAMPLE), "task=capitals", "mode=compare",
                   f"replays=[{','.join(replays)}]", f"hydra.run.dir={out}", *extra,
                   cwd=tmp_path)
    return proc, out


def test_ten_vs_two_is_detectably_worse_and_trips_the_gate(tmp_path: Path) -> None:
    a = _replay(tmp_path / "a.jsonl", "one", set(range(10)))
    b = _replay(tmp_path / "b.jsonl", "two", {10, 11})
    proc, out = _compare(tmp_path, a, b, extra=(GATE,))
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "gate tripped" in err[0] and "constrained[answer]" in err[0]
    r = load_json(out / "report.json")
    assert r["mode"] == "compare" and r["n"] == 12 and r["left_out"]["n"] == 0
    assert [s["label"] for s in r["replays"]] == ["scripted/one", "scripted/two"]
    arms = r["comparisons"][0]["arms"]
    acc = arms["constrained[answer]"]["metrics"]["answer_accuracy"]
    assert (acc["rate_from"], acc["rate_to"]) == (10 / 12, 2 / 12)
    assert (acc["delta"]["n10"], acc["delta"]["n01"]) == (10, 2)
    assert acc["delta"]["mcnemar_p"] == 2 * (1 + 12 + 66) / 2 ** 12
    assert arms["unconstrained"]["identical_share"] == 1.0
    assert arms["constrained[answer]"]["identical"] == 0  # one is right where the other is not
    assert (out / "report.md").read_text(encoding="utf-8") in proc.stdout


def test_better_is_not_worse(tmp_path: Path) -> None:
    a = _replay(tmp_path / "a.jsonl", "one", {10, 11})
    b = _replay(tmp_path / "b.jsonl", "two", set(range(10)))
    proc, _ = _compare(tmp_path, a, b, extra=(GATE,))
    assert proc.returncode == 0, proc.stderr


def test_task_versions_must_match_unless_allowed(tmp_path: Path) -> None:
    a = _replay(tmp_path / "a.jsonl", "one", set(range(12)))
    b = _replay(tmp_path / "b.jsonl", "two", set(range(12)), task_hash="0" * 64)
    line = one_line_error(_compare(tmp_path, a, b)[0])
    assert "b.jsonl: meta.task_hash is " + "0" * 64 in line
    assert "compare.allow_task_change=true" in line
    proc, out = _compare(tmp_path, a, b, extra=("compare.allow_task_change=true",))
    assert proc.returncode == 0, proc.stderr
    assert "differs in" in load_json(out / "report.json")["task_check"]


def test_smollm2_outlines_vs_llamacpp(tmp_path: Path) -> None:
    """The committed pair: the 3 items llamacpp excludes are left out and listed, and the
    llamacpp side's rates are those of its own report (same 197 items)."""
    shown = [str(SMOL / "outlines.jsonl"), str(SMOL / "llamacpp.jsonl")]
    proc, out = _compare_bfcl(tmp_path, shown)
    assert proc.returncode == 0, proc.stderr
    r = load_json(out / "report.json")
    own = _own_report(tmp_path)
    assert r["left_out"]["ids"] == own["excluded"]["ids"] and r["n"] == own["n"] == 197
    for arm, pair in r["comparisons"][0]["arms"].items():
        for metric, m in pair["metrics"].items():
            assert m["rate_to"] == own["arms"][arm][metric]["rate"], (arm, metric)
            # identical texts score identically: only differing texts can be discordant
            assert m["delta"]["n10"] + m["delta"]["n01"] <= r["n"] - pair["identical"]
    assert "| `constrained[arguments]` | AST-match accuracy |" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == \
        f"Reports written to {out}: report.json, report.md"


def _compare_bfcl(tmp_path: Path, replays: list[str], *extra: str):
    out = tmp_path / "cmp"
    proc = run_vbw("mode=compare", "task=bfcl_simple", f"replays=[{','.join(replays)}]",
                   f"hydra.run.dir={out}", *extra, cwd=tmp_path)
    return proc, out


def _own_report(tmp_path: Path) -> dict:
    out = tmp_path / "own"
    proc = run_vbw("task=bfcl_simple", "model=smollm2_135m", "engine=llamacpp",
                   f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return load_json(out / "report.json")


def test_the_readme_command_prints_the_readme_output(tmp_path: Path) -> None:
    from docs.generate.blocks import COMPARE_REPLAYS, demote

    proc = run_vbw("mode=compare", "task=bfcl_simple",
                   f"replays=[{','.join(COMPARE_REPLAYS)}]", f"hydra.run.dir={tmp_path}",
                   cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert demote(md) in (ROOT / "docs" / "tutorials" / "compare.md").read_text(encoding="utf-8")


def test_a_detectably_worse_committed_replay_trips_the_gate(tmp_path: Path) -> None:
    qwen = str(REPLAYS / "bfcl_simple" / "qwen2_5_0_5b" / "outlines.jsonl")
    proc, _ = _compare_bfcl(tmp_path, [qwen, str(SMOL / "outlines.jsonl")],
                            'compare.fail_if_worse="constrained[arguments]:answer_accuracy"')
    assert proc.returncode == 1, proc.stderr
    assert "answer_accuracy" in proc.stderr and "p=" in proc.stderr


@pytest.mark.parametrize("case,expected", [
    ("missing", "replays[1]=nope.jsonl: replay file not found"),
    ("other_task", "meta.task is 'gsm8k', not 'bfcl_simple'"),
    ("one", "mode=compare needs two or more replay files"),
    ("no_mode", "is read by mode=compare and mode=merge only (mode=auto)"),
    ("bad_gate", "compare.fail_if_worse: 'constrained[arguments]:accuracy' is not ARM:METRIC"),
    ("gate_arm", "compare.fail_if_worse: constrained[x]:answer_accuracy: constrained[x] is "
                 "not compared"),
])
def test_refusals_are_one_line(tmp_path: Path, case: str, expected: str) -> None:
    o, ll = str(SMOL / "outlines.jsonl"), str(SMOL / "llamacpp.jsonl")
    gsm = str(REPLAYS / "gsm8k" / "smollm2_135m" / "outlines.jsonl")
    args = {"missing": ([o, "nope.jsonl"], ()), "other_task": ([o, gsm], ()),
            "one": ([o], ()),
            "bad_gate": ([o, ll], ('compare.fail_if_worse="constrained[arguments]:accuracy"',)),
            "gate_arm": ([o, ll], ('compare.fail_if_worse="constrained[x]:answer_accuracy"',))}
    if case == "no_mode":
        proc = run_vbw("task=bfcl_simple", f"replays=[{o},{ll}]",
                       f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    else:
        replays, extra = args[case]
        proc, _ = _compare_bfcl(tmp_path, replays, *extra)
    assert expected in one_line_error(proc)


def test_no_common_items_or_arms_is_one_line(tmp_path: Path) -> None:
    a = _replay(tmp_path / "a.jsonl", "one", set(), ids=range(6))
    b = _replay(tmp_path / "b.jsonl", "two", set(), ids=range(6, 12))
    assert "no item of task capitals is scored in every replay" in \
        one_line_error(_compare(tmp_path, a, b)[0])
    c = _replay(tmp_path / "c.jsonl", "three", set(), arms=["unconstrained"])
    d = _replay(tmp_path / "d.jsonl", "four", set(), arms=["constrained[answer]"])
    assert "no arm of task capitals is in every replay" in \
        one_line_error(_compare(tmp_path, c, d)[0])
    proc, out = _compare(tmp_path, a,
                         _replay(tmp_path / "e.jsonl", "five", set(), ids=range(6),
                                 arms=ARMS[:2]))
    assert proc.returncode == 0, proc.stderr
    r = load_json(out / "report.json")
    assert r["arms"] == ARMS[:2]
    assert r["arms_left_out"] == {k: ["scripted/one"] for k in ARMS[2:]}


def test_four_engines_on_the_committed_smollm2_replays(tmp_path: Path) -> None:
    """outlines vs llamacpp vs llguidance vs outlines-compact: three comparisons against
    the first, on the 197 items every replay scores (llamacpp's 3 exclusions left out)."""
    from docs.generate.blocks import COMPARE_REPLAYS

    proc, out = _compare_bfcl(tmp_path, [str(ROOT / p) for p in COMPARE_REPLAYS])
    assert proc.returncode == 0, proc.stderr
    r = load_json(out / "report.json")
    assert len(r["comparisons"]) == 3 and r["n"] == 197
    assert sorted(r["left_out"]["ids"]) == ["simple_133", "simple_29", "simple_49"]
    for comparison in r["comparisons"]:
        m = comparison["arms"]["constrained[arguments]"]["metrics"]["answer_accuracy"]
        assert 0.0 <= m["delta"]["mcnemar_p"] <= 1.0 and "mde" in m["delta"]
    assert "McNemar" in proc.stdout


PEAK_RSS = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
            "capture_output=True, text=True); sys.stderr.write(p.stderr); "
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def test_1000_replays_compare_in_bounded_time_and_memory(tmp_path: Path) -> None:
    """Issue 17 item 10: each replay streams through the scorer and only its states and
    text digests stay, so 1,000 replays holding 360 MB of text compare in bounded memory
    (the texts used to be held whole: 2.4 GB and 55 s)."""
    import sys
    import time

    first = Path(_replay(tmp_path / "r0.jsonl", "e", set(range(12))))
    pad = "x" * 30_000 + "\n"  # before the answer line: same answers, 30 kB each
    lines = first.read_text().splitlines()
    padded = [lines[0]] + [json.dumps({**(o := json.loads(x)), "arms": {
        **o["arms"], "unconstrained": {"text": pad + o["arms"]["unconstrained"]["text"]}}})
        for x in lines[1:]]
    text = "\n".join(padded) + "\n"
    paths = []
    for i in range(1000):
        p = tmp_path / f"r{i}.jsonl"
        p.write_text(text)
        paths.append(str(p))
    assert sum(Path(p).stat().st_size for p in paths) > 360e6
    start = time.perf_counter()
    proc = run_vbw("--config-dir", str(EXAMPLE), "task=capitals", "mode=compare",
                   f"replays=[{','.join(paths)}]", "bootstrap.resamples=100",
                   f"hydra.run.dir={tmp_path}/out", cwd=tmp_path, timeout=600,
                   prefix=(sys.executable, "-c", PEAK_RSS))
    took = time.perf_counter() - start
    code, rss_kib = (int(x) for x in proc.stdout.split())
    assert code == 0, proc.stderr[-2000:]
    report = load_json(tmp_path / "out/report.json")
    assert len(report["replays"]) == 1000 and report["n"] == 12
    assert all(p["identical"] == 12 for c in report["comparisons"] for p in c["arms"].values())
    print(f"compare of 1,000 replays: {took:.1f} s, peak RSS {rss_kib / 1024:.0f} MiB")
    assert rss_kib / 1024 < 300, rss_kib / 1024
    assert took < 120, took


def test_arms_schemas_compares_one_schema_s_arms(tmp_path: Path) -> None:
    gsm = [str(REPLAYS / "gsm8k/smollm2_135m" / f"{e}.jsonl") for e in ("outlines", "llamacpp")]
    out = tmp_path / "cmp"
    proc = run_vbw("mode=compare", "task=gsm8k", f"replays=[{','.join(gsm)}]",
                   "arms.schemas=[answer]", f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    r = load_json(out / "report.json")
    assert r["arms"] == ["unconstrained", "prompt_json[answer]", "constrained[answer]",
                         "reason_then_constrain[answer]"]
    assert list(r["comparisons"][0]["arms"]) == r["arms"]
    assert "reasoning" not in proc.stdout


def test_interventions_per_replay_side_by_side(tmp_path: Path) -> None:
    """Each replay's per-arm summary over the paired items; an arm one replay did not
    record says so in its row."""
    import io

    from tests.interventions_data import with_interventions
    from vbw.modes.compare import compare_replays
    from vbw.report.compare import render_compare

    a = with_interventions(SMOL / "outlines.jsonl", tmp_path / "a.jsonl", 20)
    b = with_interventions(SMOL / "llamacpp.jsonl", tmp_path / "b.jsonl", 20,
                           unrecorded=["reason_then_constrain[arguments]"])
    task = load_task(ROOT / "conf/task/bfcl_simple.yaml")
    r = compare_replays(task, [a, b], ["a.jsonl", "b.jsonl"], kinds=["prompt_json",
                        "constrained", "reason_then_constrain"], n=20,
                        allow_task_change=False, seed=1, resamples=10, err=io.StringIO())
    la, lb = (s.label for s in r.replays)
    assert set(r.interventions) == {la, lb}
    mine = r.interventions[la]["constrained[arguments]"].all
    assert mine.items == r.n and mine.interventions > 0
    assert not r.interventions[lb]["reason_then_constrain[arguments]"].recorded
    md = render_compare(r)
    assert f"| `constrained[arguments]` | `{la}` | {mine.with_interventions} of {r.n} (" in md
    assert f"| `reason_then_constrain[arguments]` | `{lb}` | not recorded |" in md
