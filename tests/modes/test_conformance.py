"""mode=conformance as a user runs it (the real `vbw`, SmolLM2's tokenizer): the reports
it writes, one line per engine on stderr, and one-line refusals (exit 2) for an unknown
engine and a tokenizer file that is not there; mode=check's engine line, counted exactly."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_json, one_line_error, run_vbw


def test_a_tasks_conformance_reports(tmp_path: Path) -> None:
    proc = run_vbw("mode=conformance", "task=bfcl_simple", "n=40",
                   "conformance.engines=[llamacpp,llguidance]", "conformance.whitespace=compact",
                   f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out"  # one task: the run folder itself, as scoring writes
    assert {"report.html", "report.json", "report.md"} <= {p.name for p in folder.iterdir()}
    report = load_json(folder / "report.json")
    assert report["mode"] == "conformance" and report["source"] == "task bfcl_simple"
    assert [e["label"] for e in report["engines"]] == ["llamacpp (compact)",
                                                      "llguidance (compact)"]
    gbnf, llg = report["engines"]
    assert gbnf["rejected_items"] == ["simple_38"]  # 1e-09: GBNF's exponent has no 0 first
    [cut] = [f for f in gbnf["findings"] if f["keyword"] == "gold"]
    assert (cut["token"], cut["char"], cut["piece"]) == (8, 15, "9")
    # 39 distinct schemas among 40 items; GBNF cannot keep simple_29's property order
    assert gbnf["all"]["schemas"] == 39 and gbnf["all"]["compiled"] == 38
    assert llg["all"]["exact"] == llg["all"]["sound"] == 39 and llg["findings_total"] == 0
    lines = [x for x in proc.stderr.splitlines() if x.startswith("conformance: ")]
    assert lines[0].startswith("conformance: llamacpp (compact): 38 of 39 schemas compile")
    assert "# vbw conformance: task bfcl_simple" in proc.stdout
    assert "<script" not in (folder / "report.html").read_text(encoding="utf-8").lower()


def test_an_unknown_engine_is_one_line_before_anything_loads(tmp_path: Path) -> None:
    proc = run_vbw("mode=conformance", "task=gsm8k", "conformance.engines=[outlnes]",
                   cwd=tmp_path)
    assert proc.returncode == 2
    assert "conformance.engines: unknown engine 'outlnes'; valid engines:" in \
        one_line_error(proc)


def test_a_missing_tokenizer_file_is_one_line(tmp_path: Path) -> None:
    proc = run_vbw("mode=conformance", "task=gsm8k", f"conformance.tokenizer={tmp_path}/no.gguf",
                   cwd=tmp_path)
    assert proc.returncode == 2
    assert "no.gguf" in one_line_error(proc)


def test_check_names_the_engine_that_rejects_a_gold_shaped_answer(tmp_path: Path) -> None:
    proc = run_vbw("mode=check", "task=bfcl_simple", "n=39", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stdout.splitlines() if x.startswith("warning: engine llamacpp")]
    assert len(lines) == 2  # flexible and compact
    assert lines[0].startswith("warning: engine llamacpp (flexible) rejects the valid "
                               "gold-shaped answer of 1 of 39 item(s), e.g. item simple_38")
    assert "cannot compile 1 schema(s)" in lines[0]
    assert not any(x.startswith(("warning: engine outlines", "warning: engine llguidance"))
                   for x in proc.stdout.splitlines())
    few = run_vbw("mode=check", "task=bfcl_simple", "n=38", cwd=tmp_path, timeout=300)
    assert "rejects the valid gold-shaped answer" not in few.stdout  # simple_38 is the 39th
    off = run_vbw("mode=check", "task=bfcl_simple", "n=39", "conformance.engines=[]",
                  cwd=tmp_path)
    assert "warning: engine" not in off.stdout


def test_the_suite_on_llguidance(tmp_path: Path) -> None:
    proc = run_vbw("mode=conformance", "conformance.suite=draft2020-12",
                   "conformance.engines=[llguidance]", "conformance.whitespace=compact",
                   "outputs=[json]", f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path,
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = load_json(tmp_path / "out" / "report.json")
    assert (report["source"], report["schemas"], report["instances"]) == (
        "suite draft2020-12", 368, 1257)
    [e] = report["engines"]
    assert e["all"]["invalid_accepted"] == 0 and e["all"]["sound"] == e["all"]["compiled"]
    assert len(e["categories"]) == 46 and e["categories"]["enum"]["schemas"] > 0
    assert not (tmp_path / "out" / "report.md").exists()  # outputs=[json]


def test_several_tasks_write_a_folder_each(tmp_path: Path) -> None:
    proc = run_vbw("mode=conformance", "task=demo", "n=3", "conformance.engines=[llguidance]",
                   "conformance.whitespace=compact", f"hydra.run.dir={tmp_path / 'out'}",
                   cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for task in ("bfcl_simple", "gsm8k"):
        assert load_json(tmp_path / "out" / task / "report.json")["source"] == f"task {task}"
