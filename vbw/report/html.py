"""report.html: one self-contained page per report, readable from file:// with no network.

It holds the metric and comparison tables (rendered here, so they read without
JavaScript), the quadrant panels (quadrants.svg, inline), and an item browser: the items'
data (vbw.report.browser) embedded as JSON in a `<script type="application/json">` block
and drawn by a small vanilla script (html_assets/report.js) that puts every string on the
page with textContent, never as markup. A Content-Security-Policy forbids any fetch.

How it works and why: docs/design.md, section vbw.report.html.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import BytecodeCache, Environment, FunctionLoader
from jinja2.bccache import Bucket
from markupsafe import Markup

from vbw.report.browser import Browser, ItemView
from vbw.report.fields import html_view as fields_view
from vbw.report.interventions import html_view
from vbw.report.samples import html_view as samples_view
from vbw.report.cost import html_view as cost_view
from vbw.report.cost import render_cost_svg
from vbw.report.tax import html_view as tax_view
from vbw.report.markdown import check_lines, plain_metric_name, rate_cell
from vbw.report.svg import render_forest
from vbw.report.verdict import interval, mde_text, p_value, pts, verdict
from vbw.resources import cache_dir
from vbw.score.results import Comparison, Report
from vbw.score.paired import ALPHA
from vbw.task.jsontext.values import json_text

ASSETS = "html_assets"
# str.translate builds its output in one buffer: re.sub with a function made a Python
# string per match, about 60 bytes each, so a text of `<` cost 13 times the page it made
_ESCAPES = {cp: f"\\u{cp:04x}" for cp in (*map(ord, "<>&\u2028\u2029"), *range(0xD800, 0xE000))}
ROW_BATCH = 1_000  # report.html's plain rows encoded and escaped this many at a time
_REPLACED = "<>&\u2028\u2029"  # without a surrogate, replaced one by one (same text)


def _dumps(value: Any, floats: bool) -> str:
    """json.dumps(value, ensure_ascii=False, separators=(",", ":")). Where the caller
    knows the value holds no float (`floats=False`), orjson writes it
    (vbw.task.jsontext.values.json_text; tests/report/test_html.py); a lone surrogate or an
    int beyond 64 bits, which orjson refuses, and any float go to json."""
    if not floats and (text := json_text(value, ensure_ascii=False, compact=True)) is not None:
        return text.decode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def embed_json(value: Any, floats: bool = True) -> str:
    """JSON for a `<script type="application/json">` block: nothing in it can close the
    block, open a comment or markup, or fail to encode as UTF-8. `floats=False`: the
    value holds no float (see _dumps)."""
    text = _dumps(value, floats)
    plain = text.isascii()  # (no surrogate, no U+2028/U+2029: only <, > and & to look for)
    if not plain:
        try:
            text.encode("utf-8")  # fails on a lone surrogate, at C speed
        except UnicodeEncodeError:
            return text.translate(_ESCAPES)
    for ch in "<>&" if plain else _REPLACED:  # `in` and str.replace run at memchr speed;
        if ch in text:                        # translate (or a regex) looks at every char
            text = text.replace(ch, _ESCAPES[ord(ch)])
    return text


def item_json(view: ItemView) -> str:
    """One item's JSON in the page (what browser_json writes for it)."""
    floats = any(a.interventions is not None for a in view.arms.values())  # (their margins)
    return embed_json(view.model_dump(mode="json", exclude_none=True), floats)


def browser_json(browser: Browser) -> Iterator[str]:
    """The browser's JSON (as embed_json would give it whole) item by item, so the page
    is written without ever holding it: memory stays at one item's text."""
    head = embed_json(browser.model_dump(mode="json", exclude_none=True,
                                         exclude={"items", "rows", "encoded"}))
    yield head[:-1] + ("," if len(head) > 2 else "") + '"items":['
    for i, item in enumerate(browser.items):
        yield ("," if i else "") + item_json(item)
    for i, text in enumerate(browser.encoded, len(browser.items)):
        yield ("," if i else "") + text
    yield '],"rows":['
    rows = browser.rows  # plain rows are JSON already; a batch's list is its rows joined
    for i in range(0, len(rows), ROW_BATCH):
        yield ("," if i else "") + embed_json(rows[i:i + ROW_BATCH], floats=False)[1:-1]
    yield "]}"


@lru_cache(maxsize=None)
def asset(name: str) -> str:
    """A file of html_assets/, shipped inside the package (and the wheel)."""
    return files("vbw.report").joinpath(ASSETS, name).read_text(encoding="utf-8")


class _CompiledPage(BytecodeCache):
    """report.html's template compiled once per machine, not once per run (Jinja compiles
    it to Python source, then to bytecode, on every run that writes the page): kept
    in the user's cache folder, as Python keeps .pyc files. Jinja's bucket checks the
    template's checksum and its own bytecode version and Python's; an absent, corrupt or
    unwritable file only costs the compile."""

    @staticmethod
    def _file(bucket: Bucket) -> Path:
        """The bucket's file (cache_dir() raises RuntimeError without a home folder)."""
        return cache_dir() / f"report-page-{bucket.key}.jinja"

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            with open(self._file(bucket), "rb") as f:
                bucket.load_bytecode(f)
        except Exception:  # noqa: BLE001  (OSError, a corrupt file): compiled anew
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        tmp = None
        try:  # no home folder (RuntimeError), an unwritable cache (OSError): not kept
            path = self._file(bucket)
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                bucket.write_bytecode(f)
            os.replace(tmp, path)
        except (OSError, RuntimeError):
            if tmp is not None:
                try:
                    tmp.unlink(missing_ok=True)
                except OSError:
                    pass


@lru_cache(maxsize=1)
def _template() -> Any:
    page = asset("report.html")
    return Environment(autoescape=True, keep_trailing_newline=True,
                       loader=FunctionLoader(lambda name: (page, None, lambda: True)),
                       bytecode_cache=_CompiledPage()).get_template("report.html")


def _comparison(c: Comparison, n: int, label: str) -> dict[str, Any]:
    """One comparison's rows: metric, verdict (vbw.report.verdict, as in report.md), delta
    and CI, McNemar p, MDE; plain text, escaped by Jinja."""
    deltas = [{"metric": plain_metric_name(metric, label), "verdict": verdict(d, n, stats=False),
               "effect": d.effect, "delta": f"{pts(d.delta)} {interval(d)}",
               "p": p_value(d.mcnemar_p), "mde": mde_text(d).removeprefix("MDE ")}
              for metric, d in c.deltas.items()]
    return {"pair": f"{c.from_} → {c.to}", "role": c.role, "deltas": deltas,
            "flips": f"{c.flips.right_to_wrong} right→wrong, "
                     f"{c.flips.wrong_to_right} wrong→right"}


def render_html(r: Report, svg: str, browser: Browser | None) -> str:
    """The page for report `r`, whole (see html_chunks)."""
    return "".join(html_chunks(r, svg, browser))


def html_chunks(r: Report, svg: str, browser: Browser | None) -> Iterator[str]:
    """The page for report `r` in parts to write one after another; `svg` is
    quadrants.svg; without `browser` the page has the tables and panels and says that item
    data was not passed. The item data is streamed (browser_json) into the slot the
    template leaves for it."""
    arm_rows = [(k, rate_cell(m.schema_validity), rate_cell(m.answer_accuracy),
                 rate_cell(m.wrong_but_valid)) for k, m in r.arms.items()]
    how = ("Numbers are replayed, not regenerated." if r.mode == "replay"
           else "Generated in this run.")
    slot = f"vbw-data-{uuid.uuid4().hex}"  # no string from a file can guess it
    page = _template().render(
        r=r, how=how, arm_rows=arm_rows, checks=check_lines(r),
        comparisons=[_comparison(c, r.n, r.correctness_label) for c in r.comparisons],
        svg=Markup(svg.strip()),  # render_svg escapes what it holds
        forest=Markup(render_forest(r).strip()),  # so does render_forest
        alpha=f"{ALPHA:g}", has_items=browser is not None, iv=html_view(r), tv=tax_view(r),
        cv=cost_view(r), cost_svg=Markup(render_cost_svg(r)),  # render_cost_svg escapes
        sv=samples_view(r),
        fv=fields_view(r),
        data=Markup(slot), css=Markup(asset("report.css")),
        js=Markup(asset("report.js")),
        # k > 1 samples: the script that lists each arm's samples (vbw.report.samples)
        sjs=Markup(asset("samples.js")) if r.samples is not None else None)
    head, tail = page.split(slot, 1)
    yield head
    if browser is None:
        yield "null"
    else:
        yield from browser_json(browser)
    yield tail

