"""mode=conformance's report.md, report.html and report.json (vbw.score.conformance):
per engine, how many schemas compile and are enforced soundly and exactly; a keyword
category x engine table; and the instances each engine judged wrongly, with the token
where it cut a valid one. Every string from a schema or instance is escaped.
"""

from __future__ import annotations

from collections.abc import Collection
from html import escape
from pathlib import Path

from vbw.report.escape import code, text
from vbw.report.files import MANIFEST
from vbw.report.writers import Writer, files_written, write_outputs, written_line
from vbw.score.conformance import ConformanceReport, EngineReport, Figures, Misjudged

HEAD = ["engine", "schemas", "compile", "sound", "exact", "valid rejected",
        "invalid accepted", "mask µs median (p99)", "compile s median", "run s"]
LEGEND = ("Sound: the schema compiled and no invalid instance was accepted. Exact: it "
          "compiled and no valid instance was rejected. Both are counted over all schemas "
          "(one that does not compile is neither). Mask time: the engine's full "
          "vocabulary mask, per token, over every step of each instance's compact text.")
SHOWN_FINDINGS = 25  # per engine in report.md and report.html (report.json: more)


def _mask(f: Figures) -> str:
    if f.mask_us_median is None or f.mask_us_p99 is None:
        return "-"
    return f"{f.mask_us_median:.1f} ({f.mask_us_p99:.1f})"


def engine_cells(e: EngineReport) -> list[str]:
    a = e.all
    return [e.label, str(a.schemas), str(a.compiled), str(a.sound), str(a.exact),
            str(a.valid_rejected), str(a.invalid_accepted), _mask(a),
            "-" if e.compile_seconds_median is None else f"{e.compile_seconds_median:.4f}",
            f"{e.seconds:.1f}"]


def category_cell(f: Figures | None) -> str:
    """compiled/sound/exact of the category's schemas, and the median mask time."""
    if f is None:
        return "-"
    mask = "" if f.mask_us_median is None else f", {f.mask_us_median:.0f} µs"
    return f"{f.compiled}/{f.sound}/{f.exact} of {f.schemas}{mask}"


def categories(r: ConformanceReport) -> list[str]:
    seen: dict[str, None] = {}
    for e in r.engines:
        seen.update(dict.fromkeys(e.categories))
    return list(seen)


def finding_line(f: Misjudged) -> str:
    """One instance judged wrongly, with where it was (or should have been) cut."""
    items = f"; items {', '.join(f.items[:5])}" if f.items else ""
    head = f"{f.kind}: {f.schema_id} — {f.instance} [{f.keyword}, {f.serialisation}] {f.text}"
    if f.kind == "rejected valid":
        where = ("at the end (generation may not stop there)" if f.token is None
                 else f"at token {f.token} (char {f.char}, {f.piece!r})")
        return f"{head} — cut {where}{items}"
    if f.cut_by is None:
        return head + items
    where = ("at the end" if f.token is None
             else f"at token {f.token} (char {f.char}, {f.piece!r})")
    return f"{head} — {f.cut_by} cuts it {where}{items}"


def render_markdown(r: ConformanceReport) -> str:
    out = [f"# vbw conformance: {text(r.source)}", "",
           f"{r.schemas} schemas, {r.instances} instances; tokenizer: "
           f"{code(str(r.tokenizer.get('name')))}; texts walked: {text(r.serialisations)}; "
           f"validity: {text(r.validity)}", "", LEGEND, "",
           "| " + " | ".join(HEAD) + " |", "|---" * len(HEAD) + "|"]
    out += ["| " + " | ".join(text(c) for c in engine_cells(e)) + " |" for e in r.engines]
    cats = categories(r)
    out += ["", "## By keyword category", "",
            "Each cell: compiled/sound/exact of the category's schemas, median mask time.", "",
            "| category | " + " | ".join(text(e.label) for e in r.engines) + " |",
            "|---" * (len(r.engines) + 1) + "|"]
    for c in cats:
        out.append(f"| {code(c, in_table=True)} | " + " | ".join(
            text(category_cell(e.categories.get(c))) for e in r.engines) + " |")
    for e in r.engines:
        out += ["", f"## {text(e.label)}: instances judged wrongly ({e.findings_total})", ""]
        out += [f"- {text(finding_line(f))}" for f in e.findings[:SHOWN_FINDINGS]]
        if e.findings_total > SHOWN_FINDINGS:
            out.append(f"- … {e.findings_total - SHOWN_FINDINGS} more (report.json lists "
                       f"{len(e.findings)})")
        refused = [s for s in e.schemas if not s.compiled]
        if refused:
            out += ["", f"Not compiled ({len(refused)}), e.g.: " + "; ".join(
                f"{text(s.schema_id)}: {text(s.reason[:160])}" for s in refused[:5])]
    return "\n".join(out) + "\n"


_CSS = ("body{font-family:system-ui,sans-serif;margin:1.5em;max-width:80em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f3f3f3}"
        "code{font-size:90%}li{margin:.2em 0}")


def render_html(r: ConformanceReport) -> str:
    e_ = escape
    rows = "".join("<tr>" + "".join(f"<td>{e_(c)}</td>" for c in engine_cells(e)) + "</tr>"
                   for e in r.engines)
    cats = "".join(f"<tr><td><code>{e_(c)}</code></td>" + "".join(
        f"<td>{e_(category_cell(e.categories.get(c)))}</td>" for e in r.engines) + "</tr>"
        for c in categories(r))
    found = "".join(
        f"<h2>{e_(e.label)}: instances judged wrongly ({e.findings_total})</h2><ul>"
        + "".join(f"<li>{e_(finding_line(f))}</li>" for f in e.findings[:SHOWN_FINDINGS])
        + "</ul>" for e in r.engines)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            f"<title>vbw conformance: {e_(r.source)}</title><style>{_CSS}</style></head><body>"
            f"<h1>vbw conformance: {e_(r.source)}</h1>"
            f"<p>{r.schemas} schemas, {r.instances} instances; tokenizer "
            f"<code>{e_(str(r.tokenizer.get('name')))}</code>; texts walked: "
            f"{e_(r.serialisations)}; validity: {e_(r.validity)}</p><p>{e_(LEGEND)}</p>"
            "<table><thead><tr>" + "".join(f"<th>{e_(h)}</th>" for h in HEAD)
            + f"</tr></thead><tbody>{rows}</tbody></table><h2>By keyword category</h2>"
            "<p>Each cell: compiled/sound/exact of the category's schemas, median mask "
            "time.</p><table><thead><tr><th>category</th>"
            + "".join(f"<th>{e_(e.label)}</th>" for e in r.engines)
            + f"</tr></thead><tbody>{cats}</tbody></table>{found}</body></html>\n")


CONFORMANCE_WRITERS: dict[str, Writer[ConformanceReport]] = {  # see vbw.report.writers
    "json": Writer(MANIFEST, lambda r: r.model_dump_json(indent=1) + "\n"),
    "md": Writer("report.md", render_markdown),
    "html": Writer("report.html", render_html),
}


def write_conformance(r: ConformanceReport, out_dir: Path,
                      outputs: Collection[str] | None = None) -> str:
    """report.md, report.html and report.json (`outputs`: which; report.json always, and
    last), atomically; returns the markdown."""
    written = write_outputs(out_dir, CONFORMANCE_WRITERS, r, outputs)
    return written.get("report.md") or render_markdown(r)


def conformance_written(out_dir: Path, outputs: Collection[str] | None = None) -> str:
    """The run's closing line: the files written into `out_dir`."""
    return written_line("Reports", out_dir, files_written(out_dir, CONFORMANCE_WRITERS,
                                                          outputs))
