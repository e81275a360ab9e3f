"""Untrusted values as the report files show them as text: a CSV cell a spreadsheet reads
as text (`cell`, then `quoted`), and a gold's or answer's JSON spelling, bounded (`spell`).
One definition each, for ledger.csv and answers.csv (vbw.report.files, vbw.score.answers)
and report.html's item view (vbw.report.browser). Imports nothing of vbw.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

MAX_VALUE_CHARS = 2_000   # a gold or extracted answer's JSON spelling, cut beyond this

_FORMULA_START = frozenset("=+-@\t\r")


def cell(value: str) -> str:
    """A CSV cell a spreadsheet reads as text: one starting with = + - @ or a tab or CR
    (ids and arm keys come from task files and replays) would run as a formula (OWASP's
    CSV injection), so it gets a leading single quote, as spreadsheets expect. So does
    one whose first character after leading whitespace (Unicode's, the ideographic space
    included) is one of those, or their fullwidth or small forms (＝＋－＠, which some
    spreadsheets read as ASCII: NFKC folds them) or the minus sign U+2212."""
    head = value[:1] if value[:1] in _FORMULA_START else value.lstrip()[:1]
    if head and (unicodedata.normalize("NFKC", head) in _FORMULA_START or head == "\u2212"):
        return "'" + value
    return value


_QUOTED = re.compile('[,"\r\n]')


def quoted(value: str) -> str:
    """RFC 4180 quoting; unlike csv.writer with a "\n" line end, a CR inside a field is
    quoted too (an unquoted CR ends the row in spreadsheets and most readers)."""
    if not value or _QUOTED.search(value):
        return '"' + value.replace('"', '""') + '"'
    return value


def spell(value: Any) -> str:
    """A gold or answer as JSON (non-JSON values as their str), cut to MAX_VALUE_CHARS."""
    try:
        s = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError):
        s = str(value)
    if len(s) > MAX_VALUE_CHARS:
        s = s[:MAX_VALUE_CHARS] + f"… [{len(s) - MAX_VALUE_CHARS:,} more characters]"
    return s
