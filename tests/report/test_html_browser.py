"""report.html in a real browser: headless Chromium (Debian's `chromium`, driven by
Playwright for Python with that system browser: no browser download) opens the page from
file://, filters, searches, opens items and takes the screenshot docs/tutorials/replay.md shows.

    VBW_UPDATE_SCREENSHOT=1 python -m pytest tests/report/test_html_browser.py

rewrites tests/report/report_html.png, the picture docs/tutorials/replay.md shows; otherwise the test
checks its own screenshot is not blank and leaves the committed one alone. In CI (CI=true)
a missing Chromium or Playwright fails the test instead of skipping it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPLAYS, load_json, run_vbw
from tests.report.conftest import BIG_TEXT, EMOJI_TEXT, EVIL_ID, EVIL_LABEL, EVIL_QUESTION, EVIL_TEXT
from vbw.replay import read_replay

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parent / "report_html.png"
GSM8K = REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl"


def _unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{why}: CI must run the browser tests (.ci/run installs them)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    exe = shutil.which("chromium")
    if exe is None:
        _unavailable("no `chromium` on PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (the `test` extra)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that records every request it makes and every script error or dialog."""
    pg = browser.new_page(viewport={"width": 1400, "height": 900})
    pg.set_default_timeout(15_000)
    pg.requests, pg.problems = [], []
    pg.on("request", lambda r: pg.requests.append(r.url))
    pg.on("pageerror", lambda e: pg.problems.append(f"error: {e}"))
    pg.on("dialog", lambda d: (pg.problems.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    pg.close()


@pytest.fixture(scope="module")
def gsm8k_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gsm8k_html") / "out"
    proc = run_vbw("task=gsm8k", f"hydra.run.dir={out}", cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _filter(page: Any, label: str) -> int:
    """Choose a filter by its label; the number of rows then shown."""
    value = page.eval_on_selector(
        "#filter", "(s, l) => [...s.options].find(o => o.dataset.label === l).value", label)
    page.select_option("#filter", value)
    return page.locator("#rows tr:not([hidden])").count()


def _mark(page: Any, arm: str, kind: str) -> str | None:
    loc = page.locator(f'#detail section[data-arm="{arm}"] pre[data-role="output"] mark.{kind}')
    return loc.text_content() if loc.count() else None


def _non_blank(png: bytes) -> None:
    from PIL import Image, ImageStat  # Pillow: installed with outlines, listed in `test`

    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.width >= 800 and img.height >= 400
    assert max(ImageStat.Stat(img.convert("L")).stddev) > 20  # not one flat colour
    assert len(img.getcolors(maxcolors=1 << 20) or []) > 50  # text, badges, panels


def test_filters_match_report_json_and_an_item_shows_its_texts(page: Any,
                                                               gsm8k_run: Path) -> None:
    report = load_json(gsm8k_run / "report.json")
    page.goto((gsm8k_run / "report.html").as_uri())
    assert page.locator("#rows tr").count() == report["n"]
    for arm, m in report["arms"].items():
        if m["quadrant"] is not None:
            assert _filter(page, f"wrong-but-valid: {arm}") == m["quadrant"]["valid_wrong"], arm
    for c in report["comparisons"]:
        pair = f"{c['from']} → {c['to']}"
        assert _filter(page, f"{pair}: right→wrong") == c["flips"]["right_to_wrong"], pair
        assert _filter(page, f"{pair}: wrong→right") == c["flips"]["wrong_to_right"], pair
    shown = _filter(page, "wrong-but-valid: constrained[answer]")
    assert page.text_content("#count") == f"{shown} of {report['n']} items shown"
    row = page.locator("#rows tr:not([hidden])").first
    item_id = row.locator("td").first.text_content()
    row.click()
    record = next(r for r in read_replay(GSM8K).records if r.id == item_id)
    assert page.text_content("#detail h3") == item_id
    for arm in report["arms"]:
        out = page.locator(f'#detail section[data-arm="{arm}"] pre[data-role="output"]')
        assert out.text_content() == record.arms[arm].text, arm
    ledger = next(r for r in report["ledger"] if r["id"] == item_id)
    assert ledger["constrained[answer]"] == "valid/wrong"
    json_mark = _mark(page, "constrained[answer]", "json")
    assert json_mark is not None and json.loads(json_mark) == json.loads(
        record.arms["constrained[answer]"].text)
    assert "Janet" in page.locator('#detail section[data-arm="unconstrained"] pre.prompt').first \
        .text_content()  # the prompt, rendered from the task
    png = page.locator("#browser").screenshot()
    _non_blank(png)
    if os.environ.get("VBW_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.write_bytes(png)
    assert all(u.startswith("file://") for u in page.requests), page.requests  # no network
    assert not page.problems, page.problems


def test_search_finds_by_id_and_by_text(page: Any, gsm8k_run: Path) -> None:
    page.goto((gsm8k_run / "report.html").as_uri())
    page.fill("#search", "gsm8k_test_17")
    assert page.locator("#rows tr:not([hidden])").count() == 11  # 17 and 170-179
    page.fill("#search", "gsm8k_test_199")
    assert page.locator("#rows tr:not([hidden])").count() == 1
    page.fill("#search", "JANET’S DUCKS")  # case-insensitive, in the prompts
    assert page.locator("#rows tr:not([hidden]) td").first.text_content() == "gsm8k_test_0"
    page.fill("#search", "")
    assert page.locator("#rows tr:not([hidden])").count() == 200
    assert not page.problems, page.problems


def test_hostile_texts_show_as_text_and_run_nothing(page: Any, hostile_run: Path) -> None:
    page.goto((hostile_run / "report.html").as_uri())
    assert page.evaluate("window.pwned") is None
    assert page.text_content("table.metrics th:nth-child(3)") == EVIL_LABEL
    page.fill("#search", "</textarea>")  # found in the question and in the texts
    rows = page.locator("#rows tr:not([hidden])")
    assert rows.count() == 1
    rows.first.click()
    assert page.text_content("#detail h3") == EVIL_ID
    free = page.locator('#detail section[data-arm="unconstrained"]')
    assert free.locator('pre[data-role="output"]').text_content() == EVIL_TEXT
    assert EVIL_QUESTION in free.locator("pre.prompt").first.text_content()
    assert _mark(page, "unconstrained", "answer") == "Paris"
    assert page.locator('#detail section[data-arm="prompt_json[answer]"] dd.answer') \
        .text_content() == json.dumps('<img src=x onerror="window.pwned=4">')
    page.fill("#search", "cap_japan")
    page.locator("#rows tr:not([hidden])").first.click()
    out = page.locator('#detail section[data-arm="unconstrained"] pre[data-role="output"]')
    assert "characters not embedded" in out.locator(".cutmark").text_content()
    assert _mark(page, "unconstrained", "answer") == "Tokyo"  # marked in the kept tail
    assert out.text_content().startswith("</script></script>") and len(BIG_TEXT) > 1 << 20
    page.fill("#search", "")
    assert _filter(page, "finish_reason=length (any arm)") == 1
    page.locator("#rows tr:not([hidden])").first.click()
    assert _mark(page, "unconstrained", "answer") == "Rome"  # after two emoji
    assert EMOJI_TEXT.startswith("😀😀")
    assert page.evaluate("window.pwned") is None
    assert not page.problems, page.problems


def test_the_readme_screenshot_is_committed_and_not_blank() -> None:
    """The picture docs/tutorials/replay.md shows, written by the first test above with
    VBW_UPDATE_SCREENSHOT=1 (never by hand)."""
    assert SCREENSHOT.is_file(), "run VBW_UPDATE_SCREENSHOT=1 on this module"
    _non_blank(SCREENSHOT.read_bytes())


def test_a_100000_character_id_keeps_the_arm_columns_on_screen(page: Any,
                                                                tmp_path: Path) -> None:
    """Issue 17 item 10: the id cell is cut with an ellipsis (the whole id in its title),
    so every arm's column stays inside the item list."""
    from tests.report.test_atomic import big_report
    from vbw.report.browser import ArmView, Browser, ItemView, cut
    from vbw.report.writers import write_reports

    report = big_report(2)
    long_id = "x" * 100_000
    report.ledger[0]["id"] = long_id
    arms = list(report.arms)
    views = [ItemView(id=i, gold="1", arms={a: ArmView(state="valid/right", text=cut("t"))
                                             for a in arms}) for i in (long_id, "item_1")]
    browser = Browser(arms=arms, contract=arms[1:], comparisons=[], prompts_note="n",
                      items=views)
    write_reports(report, tmp_path, browser)
    page.goto((tmp_path / "report.html").as_uri())
    pane = page.locator(".list").bounding_box()
    for row in range(2):
        last = page.locator(f"#rows tr:nth-child({row + 1}) td").last.bounding_box()
        assert last["x"] + last["width"] <= pane["x"] + pane["width"] + 1, (last, pane)
    cell = page.locator("#rows tr:first-child td.id")
    assert cell.get_attribute("title").startswith("x" * 1000)
    assert page.eval_on_selector("#rows tr:first-child td.id",
                                 "e => e.scrollWidth > e.clientWidth")  # cut, not wrapped
    assert not page.problems


def test_the_forest_plot_draws_every_comparison_under_the_csp(page: Any,
                                                               gsm8k_run: Path) -> None:
    """report.html's forest plot is drawn by the browser (inline SVG, no script, nothing
    fetched): one dot per comparison and metric, filled exactly where report.json has an
    effect, every dot inside the plot, and its row's tooltip naming the verdict."""
    report = load_json(gsm8k_run / "report.json")
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.goto((gsm8k_run / "report.html").as_uri())
    svg = page.locator("svg.forest")
    box = svg.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 100
    deltas = [d for c in report["comparisons"] for d in c["deltas"].values()]
    dots = svg.locator("circle")
    assert dots.count() == len(deltas) == 9
    for i, d in enumerate(deltas):
        dot = dots.nth(i).bounding_box()
        assert dot is not None and box["x"] <= dot["x"] and dot["x"] + dot["width"] <= \
            box["x"] + box["width"], i
        filled = dots.nth(i).get_attribute("fill") != "#fff"
        assert filled == d["effect"], i
    titles = svg.locator("g > title").all_text_contents()
    assert titles[4].startswith("prompt_json[reasoning] → constrained[reasoning], answer "
                                "accuracy: +")
    assert "pts observed; not distinguishable from zero at N=200 (p=" in titles[4]
    assert not [m for m in console if "Content Security Policy" in m], console
    assert all(u.startswith("file://") for u in page.requests), page.requests
    assert not page.problems, page.problems


def test_the_item_view_marks_the_fields_two_arms_read_apart(page: Any,
                                                            tmp_path: Path) -> None:
    """BFCL simple: its fields are the call's parameters; simple_7's constrained output
    gets `unit` wrong where another arm differs, and the page says which."""
    out = tmp_path / "out"
    replay = REPLAYS / "bfcl_simple/smollm2_135m/outlines.jsonl"
    proc = run_vbw("task=bfcl_simple", "mode=replay", f"replay={replay}",
                   f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page.goto((out / "report.html").as_uri())
    assert page.locator("#fields table.fields:not(.wrong-valid) tbody tr").count() == len(
        load_json(out / "report.json")["fields"])
    changed = _filter(page, "a field changed between arms")
    assert 0 < changed <= 200
    page.fill("#search", "simple_7")
    page.locator("#rows tr:not([hidden])").first.click()
    section = page.locator('#detail section[data-arm="constrained[arguments]"]')
    fields = section.locator("ul.fields li")
    texts = [fields.nth(i).text_content() for i in range(fields.count())]
    assert "radius (integer): right" in texts[0]
    assert texts[1].startswith("unit (string): wrong")
    assert page.locator("#detail table.summary th").last.text_content() == \
        "fields changed between arms"
    assert not page.problems, page.problems


def test_an_item_shows_its_k_samples_per_arm(page: Any, tmp_path: Path) -> None:
    """A k = 3 replay: each arm's section lists samples 2 and 3, with the state, answer
    and text report.json's per-sample scoring and the replay give them."""
    import csv

    from tests.score.test_samples import _sampled_replay
    replay = _sampled_replay(tmp_path / "r", k=3, n=6)
    out = tmp_path / "out"
    proc = run_vbw("task=gsm8k", f"replay={replay}", "n=6", "outputs=[html,csv]",
                   f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "answers.csv", newline="", encoding="utf-8") as f:
        rows = {(r["id"], r["arm"], r["sample"]): r for r in csv.DictReader(f)}
    page.goto((out / "report.html").as_uri())
    assert page.locator("#samples table.samples tbody tr").count() == 6  # one per arm
    rec = json.loads(replay.read_text().splitlines()[2])  # the second item
    page.locator("#rows tr").nth(1).click()
    for arm in rec["arms"]:
        section = page.locator(f'#detail section[data-arm="{arm}"]')
        samples = section.locator("details.sample")
        assert samples.count() == 2, arm
        for i in range(2):
            box = samples.nth(i)
            box.locator("summary").click()
            row = rows[(rec["id"], arm, str(i + 2))]
            said = box.locator("summary").text_content()
            state = ("" if row["valid"] == "" else "valid/" if row["valid"] == "1"
                     else "invalid/") + ("right" if row["right"] == "1" else "wrong")
            assert f" {state if row['valid'] else 'n/a/' + state};" in said, (arm, said)
            assert box.locator("pre").text_content() == rec["samples"][i][arm]["text"]
    assert not page.problems, page.problems
