"""Report rendering: JSON, Markdown, HTML (with an item browser), SVG quadrants and the
per-item ledger CSV."""

from vbw.report.files import ledger_csv
from vbw.report.markdown import render_markdown
from vbw.report.svg import render_svg
from vbw.report.writers import write_reports

__all__ = ["ledger_csv", "render_markdown", "render_svg", "write_reports"]
