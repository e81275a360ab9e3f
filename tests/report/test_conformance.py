"""vbw.report.conformance: report.md and report.html say what each engine got wrong, and
every string from a schema or an instance is escaped."""

from __future__ import annotations

import numpy as np

from vbw.report.conformance import finding_line, render_html, render_markdown
from vbw.score.conformance import ConformanceReport, Misjudged, SchemaOutcome, engine_report

HOSTILE = '<script>alert(1)</script>|`x`'


def _report() -> ConformanceReport:
    wrong = [Misjudged(kind="rejected valid", schema_id=HOSTILE, category=HOSTILE,
                       instance=HOSTILE, keyword="gold", serialisation="compact",
                       text='{"a":"<img src=x>"}', token=3, char=5, piece="<b", items=["i1"]),
             Misjudged(kind="accepted invalid", schema_id="s", category="c", instance="bad",
                       keyword="enum", serialisation="spaced", text='{"a": 9}', token=4,
                       char=6, piece="9", cut_by="llguidance")]
    e = engine_report("outlines", "flexible",
                      [SchemaOutcome(schema_id=HOSTILE, category=HOSTILE, compiled=True,
                                     valid_rejected=1, invalid_accepted=1)],
                      [np.array([5000])], wrong, 2.0)
    return ConformanceReport(source="task t", tokenizer={"name": "m"}, serialisations="s",
                             validity="v", schemas=1, instances=2, engines=[e], versions={})


def test_markdown_lists_each_wrong_instance_with_its_token() -> None:
    md = render_markdown(_report())
    assert "| outlines (flexible) | 1 | 1 | 0 | 0 | 1 | 1 | 5.0 (5.0) |" in md
    assert "cut at token 3 (char 5, '&lt;b'); items i1" in md
    assert "llguidance cuts it at token 4 (char 6, '9')" in md
    # no raw HTML outside a code span (where a renderer shows it as text)
    assert "- rejected valid: &lt;script&gt;alert(1)&lt;/script&gt;\\|" in md
    assert "| `` <script>alert(1)</script>\\|`x` `` |" in md
    assert md.count("<script>") == 1


def test_html_escapes_every_string() -> None:
    page = render_html(_report())
    assert "<script>alert" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "default-src 'none'" in page  # no script may run even if one got through


def test_the_end_is_said_when_no_token_was_cut() -> None:
    f = Misjudged(kind="rejected valid", schema_id="s", category="c", instance="i",
                  keyword="k", serialisation="compact", text="1")
    assert finding_line(f).endswith("cut at the end (generation may not stop there)")
