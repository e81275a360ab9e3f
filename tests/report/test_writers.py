"""One writer of output sets (vbw.report.writers): the `outputs` setting chooses the files,
the manifest is always written and always last, and a dropped writer's old file goes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.report.test_atomic import big_report
from vbw.report import files
from vbw.report.compare import COMPARE_WRITERS
from vbw.report.writers import (ANSWERS_WRITER, MANIFEST_WRITER, OUTPUT_NAMES, OUTPUTS,
                                REPORT_WRITERS, chosen, write_reports)
from vbw.sweep.outcome import read_exit_code
from vbw.sweep.summary import SUMMARY_WRITERS, write_summary


def test_every_table_uses_the_registered_names_and_has_the_manifest() -> None:
    assert OUTPUT_NAMES == tuple(OUTPUTS.classes) == ("json", "md", "html", "svg", "csv")
    assert list(REPORT_WRITERS) == [*OUTPUT_NAMES, ANSWERS_WRITER]  # answers: no choice
    assert OUTPUTS.group == "vbw.outputs"  # an installed package adds one (test_registry)
    for table in (REPORT_WRITERS, COMPARE_WRITERS, SUMMARY_WRITERS):
        assert set(table) <= {*OUTPUT_NAMES, ANSWERS_WRITER} and MANIFEST_WRITER in table


def test_a_plugged_writer_is_chosen_by_name_and_cannot_take_another_file() -> None:
    from vbw.errors import ConfigError
    from vbw.report.writers import Output, report_writers

    class Thief(Output):
        name, file = "zoo_thief", "report.json"

        @staticmethod
        def render(s: object) -> str:
            return ""

    OUTPUTS.plug(Thief)
    try:
        assert "zoo_thief" not in report_writers(None)  # the default: vbw's own
        with pytest.raises(ConfigError, match=r"^config: outputs: 'zoo_thief' and 'json' "
                           r"both write report.json; choose one$"):
            report_writers(["md", "zoo_thief"])
        with pytest.raises(ConfigError, match=r"unknown output kind 'htm'; did you mean"):
            report_writers(["htm"])
    finally:
        del OUTPUTS._classes["zoo_thief"]


def test_the_manifest_writer_cannot_be_dropped() -> None:
    assert chosen(["md"]) == {"md", "json", "answers"}  # a report's answers.csv too
    assert chosen(None) == {*OUTPUT_NAMES, "answers"}


@pytest.fixture
def order(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file names in the order write_set puts them in place (the rename of each
    written temporary file: the manifest's may be written early, it is renamed last)."""
    seen: list[str] = []
    real = files.os.replace

    def spy(src: object, dst: object) -> None:
        seen.append(Path(str(dst)).name)
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", spy)
    return seen


def test_outputs_choose_the_files_and_report_json_goes_last(tmp_path: Path,
                                                            order: list[str]) -> None:
    r = big_report(3)
    (tmp_path / "answers.csv").write_text("an older run's")
    md = write_reports(r, tmp_path)  # no answers kept (vbw.score.answers): none written
    assert sorted(order) == sorted(w.file for w in REPORT_WRITERS.values()
                                   if w.file != "answers.csv")
    assert not (tmp_path / "answers.csv").exists()
    assert order[-1] == "report.json"
    order.clear()
    assert write_reports(r, tmp_path, outputs=["md"]) == md  # markdown returned either way
    assert order == ["report.md", "report.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]
    order.clear()
    write_reports(r, tmp_path, outputs=["json"])  # printed, not written: no stale report.md
    assert order == ["report.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_summary_json_goes_last_and_holds_the_exit_code(tmp_path: Path,
                                                         order: list[str]) -> None:
    md = write_summary(tmp_path, [], 2)
    assert order[-1] == "summary.json" and sorted(order) == sorted(
        ["summary.md", "summary.html", "summary.json"])
    assert read_exit_code(tmp_path) == 2
    order.clear()
    assert write_summary(tmp_path, [], 1, ["json", "md"]) == md.replace("exit 2", "exit 1")
    assert order == ["summary.md", "summary.json"]
    assert not (tmp_path / "summary.html").exists()


def test_an_unknown_writer_is_one_line_exit_2(tmp_path: Path) -> None:
    from tests.conftest import run_vbw

    p = run_vbw("outputs=[json,pdf]", f"hydra.run.dir={tmp_path}", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    [line] = p.stderr.strip().splitlines()
    assert "outputs" in line and "'pdf'" in line
    assert line.endswith("valid: " + ", ".join(OUTPUT_NAMES)), line
    assert not list(tmp_path.glob("**/report.json"))


def test_a_run_with_outputs_json_md_writes_no_page(tmp_path: Path) -> None:
    from vbw.cli.job import run
    from vbw.config import RunConfig
    from tests.conftest import ROOT, TASK_CONF
    from vbw.task.runner import load_task

    cfg = RunConfig.model_validate({
        "model": {"name": "qwen2_5_0_5b"}, "engine": {"name": "outlines"},
        "arms": {"name": "standard", "kinds": ["prompt_json", "constrained"],
                 "max_tokens": {"free": 1, "json": 1, "package": 1}},
        "mode": "replay", "n": 5, "outputs": ["json", "md"],
        "replay": str(ROOT / "replays/gsm8k/qwen2_5_0_5b/outlines.jsonl")})
    out = io.StringIO()
    assert run(cfg, [load_task(TASK_CONF / "gsm8k.yaml")], tmp_path, tmp_path, out,
               io.StringIO()) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "report.json",
                                                           "report.md"]
    assert (tmp_path / "report.md").read_text(encoding="utf-8") in out.getvalue()


def test_compare_writes_report_json_last_and_md_only_when_chosen(tmp_path: Path,
                                                                  order: list[str]) -> None:
    from docs.generate.blocks import COMPARE_REPLAYS, ROOT as REPO
    from vbw.modes.compare import compare_replays
    from vbw.report.compare import write_compare
    from vbw.task.arms import ARM_KINDS
    from vbw.task.runner import load_task

    r = compare_replays(load_task(REPO / "conf/task/bfcl_simple.yaml"),
                        [REPO / p for p in COMPARE_REPLAYS[:2]], COMPARE_REPLAYS[:2],
                        kinds=list(ARM_KINDS), n=20, allow_task_change=False, seed=42,
                        resamples=200, err=io.StringIO())
    md = write_compare(r, tmp_path)
    assert order == ["report.md", "report.json"]
    order.clear()
    assert write_compare(r, tmp_path, ["json"]) == md
    assert order == ["report.json"] and not (tmp_path / "report.md").exists()


@pytest.mark.parametrize("file", ["/tmp/x.txt", "../x.txt", "sub/x.txt", "..", ".x", "",
                                  "a\\b", "a\0b"])
def test_a_plugin_writer_writes_only_a_plain_file_name_in_the_run_folder(file: str) -> None:
    """Issue 30 item 10: a plugin writer's `file` is refused unless it is a plain name:
    an absolute path or `..` wrote outside the run's folder."""
    from vbw.errors import ConfigError
    from vbw.report.writers import OUTPUTS, Output, report_writers

    class Zoo(Output):
        name = "zoo_writer"

        @staticmethod
        def render(s):  # type: ignore[no-untyped-def]
            return ""

    Zoo.file = file
    OUTPUTS.plug(Zoo)
    try:
        with pytest.raises(ConfigError, match=r"^config: outputs: 'zoo_writer' writes .*, "
                           "not a file name in the run's folder"):
            report_writers(["json", "zoo_writer"])
        Zoo.file = "zoo.txt"
        assert report_writers(["json", "zoo_writer"])["zoo_writer"].file == "zoo.txt"
    finally:
        OUTPUTS._classes.pop("zoo_writer")


def test_report_json_keeps_a_lone_surrogate_from_a_replay(tmp_path: Path) -> None:
    """A replay read back holds a server's lone surrogate (header fields, an exclusion
    reason); pydantic cannot write it as JSON, so report.json is written by json instead,
    the surrogate as its escape: the same values, read back."""
    import json

    from vbw.report.writers import JsonOutput, ReportSet

    report = big_report(2).model_copy(update={"meta": {"model": {"name": "a\ud800b"}}})
    text = JsonOutput.render(ReportSet(report, None))
    files.write_atomic(tmp_path / "report.json", text)
    back = json.loads((tmp_path / "report.json").read_bytes())
    assert back == json.loads(json.dumps(report.model_dump(mode="json", by_alias=True)))
    assert back["meta"]["model"]["name"] == "a\ud800b"
