"""The live progress: a bar on a terminal; off a terminal a plain line at least every
`interval` seconds (30 by default), so a log never sits silent for minutes; `off` is
silent, `on` forces the bar."""

from __future__ import annotations

import io
import time

from vbw.generate.progress import LOG_INTERVAL, Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_progress_on_a_terminal() -> None:
    out = _Tty()
    bar = Progress(total=4, done=1, label="gsm8k", stream=out)
    bar.advance()
    bar.close()
    text = out.getvalue()
    assert "gsm8k [" in text and "2/4" in text and "items/s" in text and "ETA" in text
    assert text.endswith("\n")


def test_off_a_terminal_a_line_every_interval() -> None:
    assert LOG_INTERVAL == 30.0
    out, clock = io.StringIO(), _Clock()
    bar = Progress(total=200, done=20, label="gsm8k", stream=out, clock=clock, heartbeat=False)
    clock.now += 10
    bar.advance()  # 10 s in: too soon for a line
    assert out.getvalue() == ""
    clock.now += 20
    bar.advance()  # 30 s in, 2 items done in this run
    assert out.getvalue() == ("vbw: gsm8k: 22/200 items, 0.07 items/s, about 0:44:30 left "
                              "(0:00:30 elapsed)\n")
    clock.now += 29
    bar.tick()
    assert out.getvalue().count("\n") == 1  # 29 s after the last line: nothing yet
    clock.now += 1
    bar.tick()  # a slow item: the line comes without one finishing
    assert out.getvalue().count("\n") == 2 and "22/200 items" in out.getvalue().splitlines()[1]
    bar.close()
    assert out.getvalue().splitlines()[-1] == "vbw: gsm8k: 22/200 items done in 0:01:00"


def test_before_any_item_and_short_runs() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = Progress(total=5, done=0, label="t", stream=out, clock=clock, heartbeat=False)
    clock.now += 31
    bar.tick()
    assert out.getvalue() == "vbw: t: 0/5 items, no item finished yet (0:00:31 elapsed)\n"
    quick = io.StringIO()
    short = Progress(total=3, done=0, label="t", stream=quick, clock=_Clock(), heartbeat=False)
    short.advance()
    short.close()
    assert quick.getvalue() == ""  # under the interval: nothing, not even an end line


def test_the_heartbeat_writes_while_no_item_finishes() -> None:
    out = io.StringIO()
    bar = Progress(total=3, done=0, label="t", stream=out, interval=0.05)
    deadline = time.monotonic() + 5
    while "no item finished yet" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    bar.close()
    assert "vbw: t: 0/3 items, no item finished yet" in out.getvalue()


def test_off_is_silent_and_on_forces_the_bar() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = Progress(total=3, done=0, label="t", mode="off", stream=out, clock=clock)
    clock.now += 100
    bar.advance()
    bar.close()
    assert out.getvalue() == ""
    forced = io.StringIO()
    Progress(total=3, done=0, label="t", mode="on", stream=forced).advance()
    assert "1/3" in forced.getvalue() and "\r" in forced.getvalue()
