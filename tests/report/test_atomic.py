"""Report files are written atomically: killed at any moment, a run never leaves a partial
file under a final name, and report.json is there only when the whole set is."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from vbw.report import files
from vbw.report.files import MANIFEST, PARTIAL
from vbw.report.writers import write_reports

NAMES = ("report.md", "quadrants.svg", "report.html", "ledger.csv", MANIFEST)

# A subprocess that writes one large report into one folder over and over, so a kill lands
# mid-write: the reference copy is written first, into <folder>/ref.
DRIVER = r"""
import sys, pathlib
sys.path.insert(0, sys.argv[3])
from tests.report.test_atomic import big_report
from vbw.report.writers import write_reports
report = big_report(int(sys.argv[2]))
out = pathlib.Path(sys.argv[1])
write_reports(report, out / "ref")
print("ready", flush=True)
while True:
    write_reports(report, out / "live")
"""


def big_report(n: int):
    """A report with an n-item ledger (writing it takes a while), built without scoring."""
    from vbw.score.results import ArmMetrics, Excluded, Missing, Rate, Report

    rate = Rate(rate=0.5, ci95=(0.4, 0.6))
    arms = {a: ArmMetrics(n=n, schema_validity=None if a == "unconstrained" else rate,
                          answer_accuracy=rate, wrong_but_valid=None, quadrant=None)
            for a in ("unconstrained", "constrained[answer]")}
    ledger = [{"id": f"item_{i}", "unconstrained": "n/a/right",
               "constrained[answer]": "valid/wrong"} for i in range(n)]
    return Report(task="t", correctness_label="acc", n=n, n_task=n, mode="replay",
                  excluded=Excluded(n=0, ids=[], reason="-"), missing=Missing(n=0, ids=[]),
                  meta={}, source="s", provenance="p", bootstrap={}, arms=arms,
                  comparisons=[], ledger=ledger)


def _check(live: Path, ref: Path) -> bool:
    """Every final-named file is whole (equal to the reference); report.json implies all."""
    for name in NAMES:
        if (live / name).exists():
            assert (live / name).read_bytes() == (ref / name).read_bytes(), name
    if (live / MANIFEST).exists():
        assert all((live / n).exists() for n in NAMES)
        json.loads((live / MANIFEST).read_text())
        return True
    return False


@pytest.mark.parametrize("fail_at", range(len(NAMES)))
def test_a_failure_at_any_rename_leaves_no_partial_report(tmp_path: Path, monkeypatch,
                                                          fail_at: int) -> None:
    report = big_report(50)
    write_reports(report, tmp_path / "ref")
    write_reports(report, tmp_path / "live")  # an older complete set is there
    real, calls = os.replace, []

    def crashing(src, dst):
        if len(calls) == fail_at:
            raise OSError("crash")
        calls.append(dst)
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", crashing)
    with pytest.raises(OSError, match="crash"):
        write_reports(report, tmp_path / "live")
    assert not _check(tmp_path / "live", tmp_path / "ref")  # no report.json: incomplete


def test_sigkill_at_random_moments_never_leaves_a_partial_file(tmp_path: Path) -> None:
    rng = random.Random(7)
    complete = incomplete = 0
    for trial in range(8):
        out = tmp_path / f"t{trial}"
        proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(out), "40000", str(ROOT)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if _check(out / "live", out / "ref"):
            complete += 1
        else:
            incomplete += 1
        leftovers = [p.name for p in (out / "live").glob(f"*{PARTIAL}*")] \
            if (out / "live").exists() else []
        assert all(name.startswith(".") for name in leftovers)  # hidden temporary names
    assert complete + incomplete == 8


@pytest.mark.parametrize("error", [RuntimeError("a bug"), KeyboardInterrupt()])
def test_a_page_that_fails_unexpectedly_leaves_no_manifest_nor_its_early_copy(
        tmp_path: Path, error: BaseException) -> None:
    """The manifest's copy is written while the pages are built (files._Ahead); if a page
    fails in a way the set does not survive, neither the manifest nor its copy is left."""
    def page() -> list[str]:
        raise error

    with pytest.raises(type(error)):
        files.write_set(tmp_path, {"a.md": "a\n", MANIFEST: "{}\n"}, pages={"p.html": page})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]
    files.write_set(tmp_path, {"a.md": "a\n", MANIFEST: "{}\n"},
                    pages={"p.html": lambda: ["<p>"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.md", MANIFEST, "p.html"])
