"""Report rendering: JSON, Markdown, HTML (with an item browser), SVG quadrants and the
per-item ledger CSV.

The names below are loaded on first use (PEP 562), not when the package is: importing one
light module of the package (vbw.report.escape, vbw.report.files) must not import the
whole scoring stack, since the `vbw` process that composes the config imports those alone
while a warm worker imports the rest (vbw.cli.warm_worker)."""

from __future__ import annotations

from vbw.lazy import lazy_exports

_WHERE = {"ledger_csv": "vbw.report.files", "render_markdown": "vbw.report.markdown",
          "render_svg": "vbw.report.svg", "write_reports": "vbw.report.writers"}

__all__ = ["ledger_csv", "render_markdown", "render_svg", "write_reports"]

__getattr__ = lazy_exports(__name__, _WHERE)
