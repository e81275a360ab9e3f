"""The warm worker (vbw.cli.warm_worker): a plain run handed to it shows what the one-process run
shows (stdout, stderr, exit code, files), the calling process never imports the scoring
stack when it does, and every way the worker can fail leaves the job to the caller."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vbw import parallel
from vbw.cli import warm_worker as warm
from vbw.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
# the console script's path, with a probe: did this (the calling) process import vbw.cli.job?
PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: sys.__stderr__.write("
         "'PROBE app imported here: %s\\n' % ('vbw.cli.job' in sys.modules)))\n"
         "sys.argv = ['vbw'] + sys.argv[1:]\n"
         "from vbw.__main__ import main\n"
         "main()\n")


def _run(args: list[str], cwd: Path, warm_on: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT),  # an empty verdict cache of its own
           "XDG_CACHE_HOME": str(cwd / ("cache-warm" if warm_on else "cache-alone"))}
    env.pop("VBW_PROCESSES", None)
    if not warm_on:
        env["VBW_PROCESSES"] = "1"
    return subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8").replace(str(folder), "RUN")
            for p in sorted(folder.rglob("*")) if p.is_file() and ".hydra" not in p.parts
            and not p.name.endswith(".log")}


def _same(tmp_path: Path, args: list[str], handed: bool) -> subprocess.CompletedProcess[str]:
    """Run `args` with and without the worker; everything seen must match. `handed`: the
    worker ran the job (the caller never imported vbw.cli.job), else the caller did."""
    runs = {}
    tmp_path.mkdir(parents=True, exist_ok=True)
    for on in (True, False):
        folder = tmp_path / ("warm" if on else "alone")
        runs[on] = _run([*args, f"hydra.run.dir={folder}"], tmp_path, on), folder
    (got, got_dir), (want, want_dir) = runs[True], runs[False]
    assert got.returncode == want.returncode
    assert got.stdout.replace(str(got_dir), "RUN") == want.stdout.replace(str(want_dir), "RUN")
    probe = f"PROBE app imported here: {not handed}\n"
    assert got.stderr.endswith(probe), got.stderr[-2000:]
    assert want.stderr.endswith("PROBE app imported here: True\n")
    assert got.stderr.removesuffix(probe) == want.stderr.removesuffix(
        "PROBE app imported here: True\n")
    assert _files(got_dir) == _files(want_dir)
    # what the run learned is kept for the next, whoever ran it: the schema verdicts
    # (vbw.task.schema.cache) and report.html's compiled template (vbw.report.html)
    for kept in ("valid-schemas-*.txt", "report-page-*.jinja"):
        warm_kept, alone_kept = (sorted((tmp_path / f"cache-{w}").glob(f"vbw/{kept}"))
                                 for w in ("warm", "alone"))
        assert [p.name for p in warm_kept] == [p.name for p in alone_kept]
        if kept.endswith(".txt"):
            assert [sorted(p.read_text().split()) for p in warm_kept] == \
                [sorted(p.read_text().split()) for p in alone_kept]
    return got


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not hasattr(os, "fork"),
                    reason="the worker needs two cores and fork")
def test_demo_is_handed_to_the_worker_and_shows_the_same(tmp_path: Path) -> None:
    done = _same(tmp_path, [], handed=True)
    assert done.returncode == 0 and "# vbw report: gsm8k" in done.stdout
    learned = list((tmp_path / "cache-warm").glob("vbw/valid-schemas-*.txt"))
    assert len(learned) == 1 and len(learned[0].read_text().split()) > 100  # BFCL's schemas
    assert list((tmp_path / "cache-warm").glob("vbw/report-page-*.jinja"))


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not hasattr(os, "fork"),
                    reason="the worker needs two cores and fork")
def test_a_tripped_gate_and_a_job_error_come_back_the_same(tmp_path: Path) -> None:
    gate = _same(tmp_path / "gate", ["task=gsm8k", "gate.wrong_valid_above=0.0"], handed=True)
    assert gate.returncode == 1 and "vbw: gate tripped" in gate.stderr
    error = _same(tmp_path / "error", ["task=gsm8k", "mode=replay",
                                       f"replay={tmp_path}/none.jsonl"], handed=True)
    assert error.returncode == 2
    assert error.stderr.startswith(f"vbw: error: replay file not found: {tmp_path}/none.jsonl")


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not hasattr(os, "fork"),
                    reason="the worker needs two cores and fork")
def test_a_run_that_generates_is_refused_and_runs_in_the_caller(tmp_path: Path) -> None:
    done = _same(tmp_path, ["task=gsm8k", "mode=live", f"model.path={tmp_path}/none.gguf"],
                 handed=False)
    assert done.returncode == 2 and "is not a file" in done.stderr


def test_wanted_only_for_a_command_line_without_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VBW_PROCESSES", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert warm.wanted(["task=gsm8k"])
    for flags in (["-m", "task=gsm8k,bfcl_simple"], ["--help"], ["--cfg", "job"]):
        assert not warm.wanted(flags)
    monkeypatch.setenv("VBW_PROCESSES", "1")
    assert not warm.wanted([])
    monkeypatch.delenv("VBW_PROCESSES")
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not warm.wanted([])
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert not warm.wanted([])


def _forked_worker(monkeypatch: pytest.MonkeyPatch, job: object) -> parallel.Child:
    """A real worker process whose job is `job` (fields, out_dir, environ) -> result."""
    monkeypatch.setattr(warm, "wanted", lambda argv: True)
    monkeypatch.setattr(warm, "_prepare", lambda: None)
    monkeypatch.setattr(warm, "_run_job", job)
    monkeypatch.setattr(warm, "_worker", None)
    warm.start([])
    assert warm._worker is not None
    return warm._worker


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("how", ["raises", "crashes"])
def test_a_worker_that_does_not_run_the_job_leaves_it_to_the_caller(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str) -> None:
    def job(fields: dict, out_dir: Path, environ: dict) -> object:
        if how == "raises":
            raise RuntimeError("a bug")
        os._exit(9)

    worker = _forked_worker(monkeypatch, job)
    assert warm.hand_over({"config": {}}, tmp_path) is None
    assert warm._worker is None and _gone(worker.pid)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_refused_job_comes_back_validated_with_what_loading_printed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def job(fields: dict, out_dir: Path, environ: dict) -> object:
        return warm.Outcome([("err", "vbw: warning: loaded\n")], resolved=({"n": 3}, ["a task"]))

    worker = _forked_worker(monkeypatch, job)
    got = warm.hand_over({"config": {}}, tmp_path)
    assert got is not None and got.resolved is not None and _gone(worker.pid)
    assert got.show(sys.stdout, sys.stderr) == ({"n": 3}, ["a task"])
    assert capsys.readouterr() == ("", "vbw: warning: loaded\n")


def test_the_caller_runs_a_refused_job_on_what_the_worker_resolved(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run that may generate is validated and its tasks loaded once, in the worker: the
    caller does not resolve its inputs again."""
    from vbw.cli import hydra_job, job

    cfg = object()  # the validated config, as the worker sent it
    refused = warm.Outcome([("out", "loaded\n")], resolved=(cfg, ["the tasks"]))
    monkeypatch.setattr(warm, "hand_over", lambda fields, out_dir: refused)

    def again(self: object, **changes: object) -> None:
        raise AssertionError("resolved a second time")

    ran = []
    monkeypatch.setattr(job.JobInputs, "resolve", again)
    monkeypatch.setattr(job, "run", lambda *a, **k: ran.append(a[:2]) or 0)
    fields = {"config": {}, "roots": [], "cwd": str(tmp_path)}
    assert hydra_job.plain_job(fields, tmp_path / "run") == 0
    assert ran == [(cfg, ["the tasks"])]
    assert capsys.readouterr().out == "loaded\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_what_the_worker_printed_comes_back_in_order_with_its_code_or_error(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def job(fields: dict, out_dir: Path, environ: dict) -> object:
        events = [("out", "one\n"), ("err", "two\n"), ("out", None), ("out", fields["x"])]
        if fields["x"] == "fail":
            return warm.Outcome(events, error=ConfigError("config: x: bad"))
        assert environ == dict(os.environ) and out_dir == tmp_path
        return warm.Outcome(events, 1)

    _forked_worker(monkeypatch, job)
    got = warm.hand_over({"x": "three"}, tmp_path)
    assert got is not None and got.show(sys.stdout, sys.stderr) == 1
    assert capsys.readouterr() == ("one\nthree", "two\n")
    _forked_worker(monkeypatch, job)
    got = warm.hand_over({"x": "fail"}, tmp_path)
    with pytest.raises(ConfigError, match="config: x: bad"):
        got.show(sys.stdout, sys.stderr)  # type: ignore[union-attr]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_an_unused_worker_is_killed_and_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = _forked_worker(monkeypatch, lambda *a: None)
    warm.stop()
    assert warm._worker is None and _gone(worker.pid)
    warm.stop()  # twice is harmless
