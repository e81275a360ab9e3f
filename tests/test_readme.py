"""README and docs/ figures are generated from committed files: every marked block is up to
date, and the test command CI runs is the one the README gives."""

from __future__ import annotations

import re

from tests.readme_blocks import DOCS, GENERATED, README, ROOT, blocks, render


def test_readme_keeps_one_real_result_table() -> None:
    text = README.read_text(encoding="utf-8")
    assert "<!-- BEGIN qwen-bfcl -->" in text
    assert render(text) == text, "README.md is stale: run python -m tests.readme_blocks"


def test_every_block_is_generated_not_typed() -> None:
    found: dict[str, list[str]] = {}
    for path in GENERATED:
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"<!-- BEGIN ([\w-]+) -->", text):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
        assert render(text) == text, f"{path} is stale: run python -m tests.readme_blocks"
    assert set(found) <= set(blocks()), "a block has no generator"
    assert set(blocks()) <= set(found), "a generator's block is on no page"
    for name, page in (("qwen-gsm8k", "results.md"), ("bench-scoring", "performance.md")):
        assert str((DOCS / page).relative_to(ROOT)) in found[name], name


def test_docs_blocks_are_generated_not_typed() -> None:
    bfcl = ROOT / "docs" / "bfcl.md"
    assert bfcl in GENERATED
    text = bfcl.read_text(encoding="utf-8")
    assert "<!-- BEGIN bfcl-side-by-side -->" in text
    assert "| `qwen2_5_0_5b/outlines` | `constrained[arguments]` |" in text
    assert render(text) == text, "docs/bfcl.md is stale: run python -m tests.readme_blocks"


def test_ci_runs_the_readme_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- test-command -->\n```bash\n(.*?)\n```", text, re.DOTALL)
    assert m, "README has no marked test command"
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    for line in m.group(1).splitlines():
        assert line.strip() in ci, line


def test_readme_comparisons_use_the_task_label() -> None:
    block = blocks()["qwen-bfcl"]()
    bullets = [line for line in block.splitlines() if line.startswith("- ")]
    assert bullets and all(": AST-match accuracy " in b for b in bullets)
