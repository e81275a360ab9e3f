"""vbw.generate.retry: the one retry loop every HTTP backend uses."""

from __future__ import annotations

import pytest

from vbw.errors import EngineError
from vbw.generate.retry import Retry, Retrying


class Cut(Retry):
    wait = False


def test_backoff_doubles_caps_and_honours_retry_after() -> None:
    r = Retrying(4, lambda: "POST u")
    assert [r.retry_wait(n, None) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert r.retry_wait(0, 3.0) == 3.0 and r.retry_wait(0, 99.0) == 30.0
    assert r.retry_wait(4, 1.0) == 8.0  # a shorter Retry-After never shortens the backoff


def test_retries_until_success_counting_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("vbw.generate.retry.time.sleep", slept.append)
    outcomes: list[Exception | str] = [Retry("503"), Cut("cut"), Retry("429", 2.0), "ok"]

    def attempt() -> str:
        out = outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return out

    r = Retrying(3, lambda: "POST u")
    assert r.run(attempt) == "ok"
    assert slept == [0.5, 2.0] and r.retries == 2  # the cut stream is asked again at once


def test_exhausted_is_one_engine_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vbw.generate.retry.time.sleep", lambda s: None)
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        raise Retry("HTTP 500: busy")

    with pytest.raises(EngineError, match=r"^POST u failed after 3 attempts: HTTP 500: busy$"):
        Retrying(2, lambda: "POST u").run(attempt)
    assert len(calls) == 3


def test_other_errors_are_not_retried() -> None:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        raise EngineError("HTTP 401")

    with pytest.raises(EngineError, match="HTTP 401"):
        Retrying(5, lambda: "POST u").run(attempt)
    assert len(calls) == 1


def test_the_loop_is_the_only_one() -> None:
    """The module's promise that a new HTTP backend kind reuses this loop, not a copy:
    no other module of vbw waits between attempts."""
    from pathlib import Path

    import vbw

    root = Path(vbw.__file__).parent
    waits = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if "sleep(" in p.read_text(encoding="utf-8"))
    assert waits == ["generate/retry.py"]
