"""`python -m vbw` and the `vbw` console script (vbw/__main__.py calls `main`): start the
warm worker (vbw.cli.warm_worker) while only the standard library is loaded, then run the
command line (vbw.cli.command).

How it works and why: docs/design.md, section vbw.cli.console.
"""

from __future__ import annotations

import gc
import os
import sys


def _leave(code: object) -> None:
    """Exit now with `code` when that is safe and equivalent: an int code (a string one is
    printed by the interpreter), and no other thread (the interpreter would join it)."""
    import atexit
    import threading

    if not isinstance(code, int) or threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: the usual exit reports it
        return
    atexit._run_exitfuncs()
    os._exit(code)


def main() -> None:
    try:
        _main()
    except KeyboardInterrupt:  # ^C at any point, start-up included: one line, not a traceback
        _interrupted()


def _main() -> None:
    gc.disable()  # until composed: see the docstring
    from vbw.cli import warm_worker

    warm_worker.start(sys.argv[1:])
    from vbw.cli.command import main as run_cli

    try:
        run_cli()
    except SystemExit as e:
        _leave(0 if e.code is None else e.code)
        raise
    _leave(0)


def _interrupted() -> None:
    """Exit 130 with one line; a second ^C while leaving changes nothing."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        print("vbw: interrupted", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    _leave(130)
    sys.exit(130)

