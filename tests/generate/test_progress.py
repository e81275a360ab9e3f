"""The live progress line: items done, items/s and ETA on a terminal; silent otherwise."""

from __future__ import annotations

import io

from vbw.generate.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal() -> None:
    out = _Tty()
    bar = Progress(total=4, done=1, label="gsm8k", stream=out)
    bar.advance()
    bar.close()
    text = out.getvalue()
    assert "gsm8k [" in text and "2/4" in text and "items/s" in text and "ETA" in text
    assert text.endswith("\n")


def test_progress_quiet_off_a_terminal_unless_forced() -> None:
    out = io.StringIO()
    bar = Progress(total=3, done=0, label="t", stream=out)
    bar.advance()
    bar.close()
    assert out.getvalue() == ""
    forced = io.StringIO()
    Progress(total=3, done=0, label="t", mode="on", stream=forced).advance()
    assert "1/3" in forced.getvalue()
