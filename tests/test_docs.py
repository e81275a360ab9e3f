"""README.md and docs/ are one set of pages: every relative link and `#anchor` in them must
resolve, and the README stays a front door (at most 250 lines) whose every tutorial and
reference page is reachable from the docs index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from docs.generate.blocks import DOCS, README, ROOT

PAGES = [README, *sorted(DOCS.rglob("*.md"))]
# one way to read each character (an escape is one unit), so a line of escaped brackets
# is linear, not exponential, to scan
LINK = re.compile(r"!?\[(?:[^\[\]\\]|\\.|\[[^\]]*\])*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks, where links are links."""
    out, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            out.append(line)
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
    return out


def links(path: Path) -> list[str]:
    return [t for t in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"[a-z]+:", t)]


def test_the_slug_is_githubs() -> None:
    assert slug("report.html: every item in a browser") == "reporthtml-every-item-in-a-browser"
    assert slug("Checking a task: `mode=check`") == "checking-a-task-modecheck"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_can_fail(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n[ok](#title) [bad](#nowhere) [gone](missing.md)\n"
                    "```\n[in code](#ignored)\n```\n", encoding="utf-8")
    assert links(page) == ["#title", "#nowhere", "missing.md"]
    assert anchors(page) == {"title"}


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)


def test_every_docs_page_is_in_the_index() -> None:
    index = DOCS / "README.md"
    linked = {(index.parent / t.partition("#")[0]).resolve() for t in links(index)}
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {index.resolve()}
    assert not pages - linked, sorted(str(p.relative_to(ROOT)) for p in pages - linked)


def test_the_report_reference_names_every_field_of_report_json() -> None:
    """docs/reference/report.md is hand-written: every key a real report.json has, at the
    top level, in a comparison and in a delta, must be named there in backticks."""
    from docs.generate.blocks import _score

    report = json.loads(_score("gsm8k", "smollm2_135m", "llamacpp").model_dump_json(by_alias=True))
    comparison = report["comparisons"][0]
    keys = {*report, *comparison, *comparison["deltas"]["answer_accuracy"],
            *report["excluded"], *report["bootstrap"]}
    page = (DOCS / "reference" / "report.md").read_text(encoding="utf-8")
    assert not {k for k in keys if f"`{k}`" not in page}, \
        sorted(k for k in keys if f"`{k}`" not in page)


def test_testing_figures_are_read_from_a_pytest_log() -> None:
    """docs/testing.md's generator reads the summary line and the --durations table of a
    real run's log, and refuses a log without a summary."""
    from docs.generate.testing import slowest, summary

    log = ["....", "============ slowest 60 durations ============",
           "18.89s call     tests/a.py::test_x", "0.50s setup    tests/b.py::test_y",
           "120.00s call     tests/c.py::test_z[1]",
           "2034 passed, 12 skipped in 1755.48s (0:29:15)"]
    assert summary(log) == ("2034 passed, 12 skipped", 1755.48)
    assert slowest(log, 2) == [(120.0, "tests/c.py::test_z[1]"), (18.89, "tests/a.py::test_x")]
    with pytest.raises(SystemExit):
        summary(log[:-1])
