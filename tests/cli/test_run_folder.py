"""vbw/cli/run_folder.py: a run folder is claimed by exactly one run at a time (issue 30 item 4)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from vbw.errors import ConfigError
from vbw.cli.run_folder import LOCK, claim, claimed, release

CLAIMANTS = 24


def _contend(folder: str, start: float, out: multiprocessing.Queue) -> None:
    while time.time() < start:  # every claimant tries within the same instant
        pass
    try:
        claim(Path(folder))
    except ConfigError as e:
        out.put(("refused", str(e)))
        return
    out.put(("won", ""))
    time.sleep(1.0)  # still held while the others try


@pytest.mark.parametrize("round_", range(3))
def test_many_simultaneous_claims_one_wins(tmp_path: Path, round_: int) -> None:
    """Issue 30 item 4: 15 of 200 simultaneous claims both succeeded (the holder's pid was
    written after the file was created; a reader of the empty file took it for stale)."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    start = time.time() + 0.5
    procs = [ctx.Process(target=_contend, args=(str(tmp_path / "run"), start, out))
             for _ in range(CLAIMANTS)]
    for p in procs:
        p.start()
    got = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert sorted(g[0] for g in got) == ["refused"] * (CLAIMANTS - 1) + ["won"]
    assert all(f"{tmp_path / 'run'} is in use by another vbw run" in msg
               for verdict, msg in got if verdict == "refused")


def test_a_folder_held_by_a_live_run_is_refused_and_free_once_it_ends(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from vbw.cli.run_folder import claim; claim(Path(sys.argv[1])); "
         "print('held', flush=True); "
         "time.sleep(60)", str(tmp_path)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(ConfigError, match=rf"^{tmp_path} is in use by another vbw run "
                           rf"\(pid {holder.pid}\); give this run its own hydra.run.dir$"):
            claim(tmp_path)
    finally:
        holder.kill()  # killed: its lock file stays, its lock goes with it
        holder.wait()
    assert (tmp_path / LOCK).exists()
    with claimed(tmp_path):
        assert (tmp_path / LOCK).read_text() == str(os.getpid())
    assert not (tmp_path / LOCK).exists()


def test_a_claim_this_process_holds_is_not_taken_twice(tmp_path: Path) -> None:
    assert claim(tmp_path) is True
    try:
        with claimed(tmp_path):  # the launcher's claim covers the job it runs
            pass
        assert (tmp_path / LOCK).exists()  # the inner block did not release it
    finally:
        release(tmp_path)
    assert not (tmp_path / LOCK).exists()
