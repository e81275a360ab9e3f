"""The shell examples of README.md and docs/ that need no model, run as printed.

A fenced ```bash block right after `<!-- runs -->` (or `<!-- runs: exit N -->`) is run
line by line in an empty folder holding a copy of `examples/qa`, through the real entry
point, and each line must exit 0 (or N): an example that stopped working, or a documented
exit code that changed, fails here rather than on a reader's machine."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_vbw
from docs.generate.blocks import DOCS, README, ROOT

MARKED = re.compile(r"<!-- runs(?:: exit (\d))? -->\n```bash\n(.*?)\n```", re.DOTALL)


def examples() -> list[tuple[str, str, int]]:
    """(page, command line, expected exit code) of every marked block."""
    out = []
    for page in [README, *sorted(DOCS.rglob("*.md"))]:
        for m in MARKED.finditer(page.read_text(encoding="utf-8")):
            for line in m.group(2).splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append((str(page.relative_to(ROOT)), line, int(m.group(1) or 0)))
    return out


def test_the_docs_mark_examples_to_run() -> None:
    pages = {page for page, _, _ in examples()}
    assert {"docs/tutorials/replay.md", "docs/tutorials/ci.md",
            "docs/tutorials/your-task.md"} <= pages, pages
    assert any(code == 1 for _, _, code in examples())  # the gate's documented exit 1


@pytest.mark.parametrize("page,line,code", examples(), ids=lambda v: str(v)[:60])
def test_a_marked_example_runs_as_printed(page: str, line: str, code: int,
                                          tmp_path: Path) -> None:
    argv = shlex.split(line, comments=True)
    assert argv[0] == "vbw", f"{page}: a marked example runs vbw, not {argv[0]!r}"
    shutil.copytree(ROOT / "examples" / "qa", tmp_path / "examples" / "qa")
    proc = run_vbw(*argv[1:], cwd=tmp_path, timeout=300)
    assert proc.returncode == code, f"{page}: {line}\n{proc.stderr[-2000:]}"
