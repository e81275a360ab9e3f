"""vbw.generate.crashguard: the work runs in a forked child; a native crash of it is one
EngineError naming the last step and the signal; anything else comes back as it was."""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sys
from pathlib import Path

import pytest

from vbw.errors import ConfigError, EngineError
from vbw.generate.crashguard import guarded, signal_name
from vbw.parallel import Note


def _explain(sig: int, step: str) -> str:
    return f"crashed with {signal_name(sig)} while {step}"


def _crash_by(sig: int):
    def work(mark, err):
        mark("generating item q7, arm constrained[answer]")
        print("progress before the crash", file=err, flush=True)
        if sig == signal.SIGSEGV:
            ctypes.string_at(0)  # a real invalid read, as native code makes one
        os.kill(os.getpid(), sig)
    return work


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGILL, signal.SIGBUS,
                                 signal.SIGABRT])
def test_a_native_crash_is_one_error_naming_the_step_and_signal(tmp_path: Path,
                                                                sig: int) -> None:
    err = io.StringIO()
    with pytest.raises(EngineError) as caught:
        guarded(_crash_by(sig), err, tmp_path / "native.log", _explain)
    name = signal.Signals(sig).name
    assert str(caught.value).startswith(f"crashed with {name} (")
    assert str(caught.value).endswith("while generating item q7, arm constrained[answer]")


def test_the_native_stack_trace_goes_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "native.log"
    with pytest.raises(EngineError):
        guarded(_crash_by(signal.SIGSEGV), io.StringIO(), log, _explain)
    text = log.read_text()
    assert "Fatal Python error: Segmentation fault" in text
    assert 'in work' in text  # Python's stack at the crash (faulthandler)


def test_the_result_comes_back_and_an_empty_log_is_removed(tmp_path: Path) -> None:
    log = tmp_path / "native.log"
    err = io.StringIO()

    def work(mark, out):
        mark("loading the model")
        print("loaded", file=out)
        return {"pid": os.getpid(), "path": tmp_path / "replay.jsonl"}

    got = guarded(work, err, log, _explain)
    assert got["path"] == tmp_path / "replay.jsonl" and got["pid"] != os.getpid()
    assert err.getvalue() == "loaded\n"  # a stream without a descriptor: replayed here
    assert not log.exists()


def test_native_messages_stay_in_the_log(tmp_path: Path) -> None:
    log = tmp_path / "native.log"

    def work(mark, out):
        os.write(2, b"ggml: a native warning\n")  # what llama.cpp writes to fd 2
        return 1

    assert guarded(work, io.StringIO(), log, _explain) == 1
    assert log.read_text() == "ggml: a native warning\n"


def test_a_usage_error_is_raised_as_it_was(tmp_path: Path) -> None:
    def work(mark, out):
        raise ConfigError("engine.name: unknown engine 'x'")

    with pytest.raises(ConfigError, match="^engine.name: unknown engine 'x'$"):
        guarded(work, io.StringIO(), tmp_path / "native.log", _explain)


def test_a_bug_keeps_its_traceback(tmp_path: Path) -> None:
    err = io.StringIO()

    def work(mark, out):
        raise ZeroDivisionError("a bug")

    with pytest.raises(RuntimeError, match="traceback above"):
        guarded(work, err, tmp_path / "native.log", _explain)
    assert "ZeroDivisionError: a bug" in err.getvalue()


def test_a_child_that_leaves_without_a_result_is_one_error(tmp_path: Path) -> None:
    def work(mark, out):
        os._exit(7)

    with pytest.raises(EngineError, match="exit code 7 and no result"):
        guarded(work, io.StringIO(), tmp_path / "native.log", _explain)


def test_output_through_a_real_descriptor_is_written_as_it_goes(tmp_path: Path) -> None:
    path = tmp_path / "err.txt"
    with open(path, "w") as err:
        def work(mark, out):
            out.write("line one\n")
            return "done"

        assert guarded(work, err, tmp_path / "native.log", _explain) == "done"
    assert path.read_text() == "line one\n"


def test_marks_keep_the_last_step_and_bound_its_size() -> None:
    marks = Note("starting")
    assert marks.last() == "starting"
    marks("a long step " * 200)
    assert len(marks.last().encode()) == Note.SIZE - 2
    marks("item 3")
    assert marks.last() == "item 3"
    marks("é" * 600)  # cut inside a character: still text
    assert marks.last().startswith("é")


def test_signal_names() -> None:
    assert signal_name(signal.SIGSEGV).startswith("SIGSEGV (")
    assert signal_name(200) == "signal 200"
    assert sys.platform != "linux" or "fault" in signal_name(signal.SIGSEGV).lower()


def test_an_interrupt_stops_the_child_within_the_grace_time(tmp_path: Path,
                                                            monkeypatch) -> None:
    import threading
    import time

    from vbw.generate import crashguard

    monkeypatch.setattr(crashguard, "_GRACE_SECONDS", 0.5)
    pid_file = tmp_path / "pid"

    def work(mark, out):
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)  # a child that ignores the interrupt its parent got

    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        guarded(work, io.StringIO(), tmp_path / "native.log", _explain)
    assert time.monotonic() - start < 10
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(int(pid_file.read_text()), 0)
