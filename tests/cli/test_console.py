"""vbw/cli/console.py: ^C at any point of a run is exit 130 and one line (issue 30 item 15:
during start-up it printed a traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

RAISE = "(_ for _ in ()).throw(KeyboardInterrupt())"
WHERE = {
    # forking the warm worker, before the command line module is imported
    "start-up": f"import vbw.cli.warm_worker as w; w.start = lambda argv: {RAISE}",
    # composing the command line
    "composing": f"import vbw.cli.command as c; c.check_command_line = lambda *a: {RAISE}",
    # setting the job up, before the task function runs
    "job set-up": f"import vbw.cli.command as c; c.run_composed = lambda *a: {RAISE}",
}


@pytest.mark.parametrize("where", sorted(WHERE))
def test_an_interrupt_anywhere_is_exit_130_and_one_line(where: str, tmp_path) -> None:
    code = (f"import sys; sys.argv = ['vbw', 'task=gsm8k', 'n=3', 'hydra.run.dir={tmp_path}']; "
            f"{WHERE[where]}; import vbw.__main__ as m; m.main()")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                                                       "PATH": "/usr/bin:/bin"})
    assert (proc.returncode, proc.stderr) == (130, "vbw: interrupted\n"), proc.stderr[-2000:]
