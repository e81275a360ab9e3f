"""The run modes (vbw.modes): one registered class per `mode=` value, picked from MODES;
vbw.cli.job refuses by the modes' traits and names none, and no module outside vbw.modes
switches on the mode's name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from vbw.modes import MODES, Mode

VBW = Path(__file__).resolve().parents[2] / "vbw"
# the run config's mode compared, tested for membership or matched on (a report's own
# `mode`, replay or live, and the progress bar's are other things)
SWITCH = re.compile(r"cfg\.mode\s*(==|!=|not\s+in\b|in\b)|\bmatch\s+[\w.]*cfg\.mode\b")


def test_every_mode_is_a_registered_class_of_its_own_module() -> None:
    assert sorted(MODES.kinds) == ["auto", "check", "compare", "conformance", "live", "merge",
                                  "replay"]
    assert MODES.group == "vbw.modes"  # an installed package adds one (tests/test_registry.py)
    for name in MODES.kinds:
        cls = MODES.get(name)
        assert issubclass(cls, Mode) and cls.name == name
        assert cls.__module__.startswith("vbw.modes.")


def test_the_config_default_is_a_mode() -> None:
    from vbw.config import RunConfig

    assert RunConfig.model_fields["mode"].default in MODES


def test_the_traits_vbw_app_refuses_by() -> None:
    assert {m for m in MODES.kinds if MODES.get(m).reads_replays} == {"compare", "merge"}
    assert {m for m in MODES.kinds if MODES.get(m).generates} == {"live"}
    assert {m for m in MODES.kinds if MODES.get(m).one_task} == {"merge"}


def test_no_switch_on_the_mode_outside_its_modules() -> None:
    switch = SWITCH
    found = [f"{p.relative_to(VBW.parent)}:{i}: {line.strip()}"
             for p in sorted(VBW.rglob("*.py")) if "modes" not in p.relative_to(VBW).parts
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if switch.search(line)]
    assert found == []


def test_the_pattern_above_sees_a_switch() -> None:
    """The grep above is not vacuous: it finds the shapes the old vbw.cli.job had."""
    switch = SWITCH
    for line in ('if cfg.mode == "live":', "if run_cfg.mode != 'live'",
                 'cfg.mode not in ("compare", "merge")', "if cfg.mode in MODES:",
                 "match job.cfg.mode:"):
        assert switch.search(line), line
    assert not switch.search('how = "replayed" if r.mode == "replay" else "live"')


def test_vbw_imports_no_test_module() -> None:
    bad = [str(p) for p in VBW.rglob("*.py")
           if re.search(r"^\s*(from|import)\s+tests\b", p.read_text(encoding="utf-8"), re.M)]
    assert bad == []


def test_picking_every_mode_loads_no_live_stack() -> None:
    """The mode modules import the live stack inside their run only."""
    code = ("import sys, vbw.cli.job; from vbw.modes import MODES; "
            "[MODES.get(m) for m in MODES.kinds]; "
            "print(sorted(m for m in sys.modules if m.startswith('vbw.generate') "
            "or m.split('.')[0] in ('llama_cpp', 'outlines')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
