"""docs/tutorials/elsewhere.md's "Scoring outputs made elsewhere" example, run exactly as printed: the
snippet writes a minimal replay with the standard library, and the page's command scores
it through the real entry point."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import load_json, run_vbw
from docs.generate.blocks import DOCS

PAGE = DOCS / "tutorials" / "elsewhere.md"


def _block(marker: str, lang: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(rf"<!-- {marker} -->\n```{lang}\n(.*?)\n```", text, re.DOTALL)
    assert m, f"{PAGE.name} has no ```{lang} block after <!-- {marker} -->"
    return m.group(1)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("elsewhere")
    (tmp / "snippet.py").write_text(_block("elsewhere-example", "python") + "\n", "utf-8")
    subprocess.run([sys.executable, "snippet.py"], cwd=tmp, check=True, timeout=60)
    argv = shlex.split(_block("elsewhere-command", "bash"))
    assert argv[0] == "vbw"
    proc = run_vbw(*argv[1:], f"hydra.run.dir={tmp / 'out'}", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp


def test_readme_replay_scores_as_written(scored: Path) -> None:
    rep = load_json(scored / "out/report.json")
    assert rep["n"] == 3 and rep["excluded"]["n"] == 0
    assert len(rep["arms"]) == 6
    for key, arm in rep["arms"].items():
        assert arm["answer_accuracy"]["rate"] == 1.0, key
        if key != "unconstrained":
            assert arm["schema_validity"]["rate"] == 1.0, key
    assert rep["meta"] == {"format": "vbw-replay/1", "task": "gsm8k", "arms": list(rep["arms"])}


def test_report_names_what_was_not_recorded(scored: Path) -> None:
    rep = load_json(scored / "out/report.json")
    md = (scored / "out/report.md").read_text(encoding="utf-8")
    assert "?" not in md
    assert rep["provenance"] in md and "not recorded" in rep["provenance"]
    assert "task hash not recorded" in rep["provenance"]
    prose = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f'"{rep["provenance"]}"' in prose, "the page quotes another source line"


def test_check_prints_the_header_line_the_page_shows(tmp_path: Path) -> None:
    """The page's mode=check command prints its header section as shown, and the line in
    it is a header vbw reads: the example's arms, and the task's hash."""
    argv = shlex.split(_block("elsewhere-check", "bash"))
    assert argv[0] == "vbw"
    proc = run_vbw(*argv[1:], f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = _block("elsewhere-check-output", "").splitlines()
    printed = proc.stdout.splitlines()
    at = printed.index(shown[0])
    assert printed[at:at + 3] == shown[:3]
    line = next(x for x in printed[at:] if x.startswith('{"meta"'))
    meta = json.loads(line)["meta"]
    assert shown[-1].startswith(line[:line.index('"task_hash"')])
    assert re.fullmatch(r"[0-9a-f]{64}", meta.pop("task_hash"))
    example = _block("elsewhere-example", "python")
    arms = re.search(r"ARMS = (\[.*?\])\n", example, re.DOTALL).group(1)
    assert meta == {"format": "vbw-replay/1", "task": "gsm8k", "arms": json.loads(arms)}
