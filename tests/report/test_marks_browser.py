"""report.html's intervention marks in headless Chromium (see test_html_browser.py for
the set-up): a bfcl_simple replay with hand-made events (tests.interventions_data), one
of whose `wanted` strings is markup that would set window.pwned if it ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPLAYS, ROOT, run_vbw
from tests.interventions_data import with_interventions
from tests.report.test_html_browser import _filter, browser, page  # noqa: F401 (fixtures)
from vbw.replay import read_replay
from vbw.score.landing import answer_steps, classify
from vbw.task.runner import load_task

pytestmark = pytest.mark.browser
ARM = "constrained[arguments]"
N = 20


@pytest.fixture(scope="module")
def marked_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("marks")
    replay = with_interventions(REPLAYS / "bfcl_simple/smollm2_135m/outlines.jsonl",
                                tmp / "r.jsonl", N)
    proc = run_vbw("task=bfcl_simple", f"replay={replay}", f"n={N}",
                   f"hydra.run.dir={tmp / 'out'}", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "out", replay


def test_marks_filter_and_sort(page: Any, marked_run: tuple[Path, Path]) -> None:
    out, path = marked_run
    task = load_task(ROOT / "conf/task/bfcl_simple.yaml")
    steps = answer_steps(task.spec.extract.json_.path)
    held = {r.id: r for r in read_replay(path).records}
    records = {i: r.arms[ARM] for i, r in held.items()}
    order = task.ids(N)
    in_answer = [i for i in order if any(x.answer for x in classify(
        records[i].text, [(e.char, len(e.forced)) for e in records[i].interventions], steps))]
    margins = {i: max((e.lp_wanted - e.lp_forced for a in held[i].arms.values()
                       for e in a.interventions or []), default=float("-inf")) for i in order}
    strongest = max(order, key=lambda i: (margins[i], -order.index(i)))

    page.goto((out / "report.html").as_uri())
    assert 0 < len(in_answer) < N
    assert _filter(page, f"intervention in the answer value: {ARM}") == len(in_answer)
    assert page.locator("#rows tr:not([hidden]) td.id").all_text_contents() == in_answer
    _filter(page, "all items")
    page.select_option("#sort", "strongest")
    first = page.locator("#rows tr").first
    assert first.locator("td.id").text_content() == strongest
    page.select_option("#sort", "task")
    assert page.locator("#rows tr td.id").first.text_content() == order[0]

    item = in_answer[0]
    page.locator("#rows tr", has=page.locator("td.id", has_text=item)).first.click()
    sec = page.locator(f'#detail section[data-arm="{ARM}"]')
    marks = sec.locator('pre[data-role="output"] mark.iv')
    events = records[item].interventions
    assert marks.count() == len(events)
    assert marks.first.text_content() == events[0].forced
    assert marks.first.get_attribute("title") == ("the model's choice `Sure` (p = 0.779), "
                                                  "forced `{` (p = 0.223); landed in structure")
    hit = sec.locator('pre[data-role="output"] mark.iv.in-answer')
    assert hit.count() == 1 and hit.text_content() == events[1].forced
    hit.click()
    info = sec.locator(".ivinfo").text_content()
    assert info.startswith("the model's choice `<img src=x onerror=window.pwned=5>` (p = ")
    assert info.endswith(", in the answer value")
    assert page.locator("#detail img").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert all(u.startswith("file://") for u in page.requests), page.requests
    assert not page.problems, page.problems
