"""README and docs/ figures are generated from committed files: every marked block is up to
date, and the test command CI runs is the one the README gives."""

from __future__ import annotations

import re

import pytest

from docs.generate.blocks import DOCS, GENERATED, README, ROOT, blocks, render


def test_readme_keeps_one_real_result_table() -> None:
    text = README.read_text(encoding="utf-8")
    assert "<!-- BEGIN qwen-bfcl -->" in text
    assert render(text) == text, "README.md is stale: run python -m docs.generate"


def test_every_block_is_generated_not_typed() -> None:
    found: dict[str, list[str]] = {}
    for path in GENERATED:
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"<!-- BEGIN ([\w-]+) -->", text):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
        assert render(text) == text, f"{path} is stale: run python -m docs.generate"
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
    assert render(text) == text, "docs/bfcl.md is stale: run python -m docs.generate"


FULL_SUITE = "python -m pytest -q"  # docs/testing.md: CI runs the full suite, no filter
TEST_COMMAND = re.compile(r"<!-- test-command -->\n```bash\n(.*?)\n```", re.DOTALL)


def commands(shell: str) -> list[str]:
    """A shell text's command lines, whole: continuation lines joined, each stripped;
    blank lines and comment lines (`#` first) are not commands."""
    joined = re.sub(r"\\\n", " ", shell)
    lines = (line.strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def ci_problems(readme: str, ci: str) -> list[str]:
    """Why `ci` (.ci/run) does not run the README's marked test command, one line each
    (empty: it does). Each of the block's command lines must be a whole command line of
    `ci`, in the block's order; the block's last one (the test command) must be the full
    suite and `ci`'s last command, so CI's exit code is the suite's."""
    m = TEST_COMMAND.search(readme)
    wanted = commands(m.group(1)) if m else []
    if not wanted:
        return ["README has no marked test command"]
    problems = []
    if wanted[-1] != FULL_SUITE:
        problems.append(f"README's test command is {wanted[-1]!r}, not the full suite "
                        f"{FULL_SUITE!r}")
    ran = commands(ci)
    at = 0  # where the next of the block's lines is looked for: the block's order is kept
    for line in wanted:
        if line in ran[at:]:
            at = ran.index(line, at) + 1
        else:
            problems.append(f".ci/run lacks the whole line {line!r} (in the README's order)")
    if not ran or ran[-1] != wanted[-1]:
        problems.append(f".ci/run's last command is {ran[-1] if ran else None!r}, not "
                        f"{wanted[-1]!r}")
    return problems


def test_ci_runs_the_readme_test_command() -> None:
    readme = README.read_text(encoding="utf-8")
    assert ci_problems(readme, (ROOT / ".ci/run").read_text(encoding="utf-8")) == []


LACKS = f".ci/run lacks the whole line {FULL_SUITE!r}"
CI_MUTANTS = {  # .ci/run's test line -> (what CI would run instead, the problem found)
    "fast tier only": (f'{FULL_SUITE} -m "not slow"', LACKS),
    "a -k filter": (f"{FULL_SUITE} -k readme", LACKS),
    "commented out": (f"# {FULL_SUITE}", LACKS),
    "commented out, no space": (f"#{FULL_SUITE}", LACKS),
    "failure ignored": (f"{FULL_SUITE} || true", LACKS),
    "continued with a filter": (f"{FULL_SUITE} \\\n  -m 'not slow'", LACKS),
    "not the last command": (f"{FULL_SUITE}\necho done", ".ci/run's last command is 'echo done'"),
    "removed": ("", LACKS),
}


@pytest.mark.parametrize("case", list(CI_MUTANTS))
def test_a_ci_that_does_not_run_the_full_suite_is_caught(case: str) -> None:
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert ci.count(f"\n{FULL_SUITE}\n") == 1
    instead, problem = CI_MUTANTS[case]
    found = ci_problems(readme, ci.replace(f"\n{FULL_SUITE}\n", f"\n{instead}\n"))
    assert any(p.startswith(problem) for p in found), found


def test_a_readme_block_ci_does_not_run_is_caught() -> None:
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    block = TEST_COMMAND.search(readme).group(1)
    first, *_, last = commands(block)
    fast = f'{last} -m "not slow"'
    for changed, ci_changed, problem in (
            (block.replace(last, fast), ci.replace(f"\n{last}\n", f"\n{fast}\n"),
             "not the full suite"),  # both agree on the fast tier
            (block.replace(last, f"# {last}"), ci, "last command is"),  # the block runs none
            (block.replace(first, f"{first} --no-install-recommends"), ci, "lacks the whole"),
            ("\n".join(reversed(block.splitlines())), ci, "in the README's order"),
            ("# nothing to run", ci, "no marked test command")):
        found = ci_problems(readme.replace(block, changed), ci_changed)
        assert any(problem in p for p in found), (changed, found)
    assert ci_problems(readme.replace("<!-- test-command -->", ""), ci) == \
        ["README has no marked test command"]


def test_commands_are_whole_uncommented_joined_lines() -> None:
    assert commands("a \\\n  -b\n  # c\n\n   d  \n#e") == ["a    -b", "d"]


def test_readme_comparisons_use_the_task_label() -> None:
    block = blocks()["qwen-bfcl"]()
    bullets = [line for line in block.splitlines() if line.startswith("- ")]
    assert bullets and all(": AST-match accuracy " in b for b in bullets)
