"""Round 4's hostile cases of the command line and start-up (issue 30 items 4, 6, 10, 15):
a run folder another run holds, interpolation in task files and overrides, sweeps too
large to expand, broken plugins and Hydra plugins, a writer aiming outside the run folder,
ledger.csv ids a spreadsheet would read as formulas.

A plugin is a real installed distribution: a `.dist-info` folder with its entry points and
the module beside it, written into the run's working folder, which `python -m vbw` puts
first on sys.path."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.hostile4 import Case

DIR = "hydra.run.dir=out"


def _install(folder: Path, group: str, name: str, module: str, source: str) -> None:
    (folder / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}:Plugin\n",
                                           encoding="utf-8")


# --- 4 run dir claim --------------------------------------------------------------------

def _held(folder: Path, stack: contextlib.ExitStack) -> list[str]:
    """Another vbw run holds the folder (claimed as vbw.cli.run_folder claims it)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from vbw.cli.run_folder import claim; claim(Path(sys.argv[1])); "
         "print('held', flush=True); "
         "time.sleep(120)", str(folder / "out")], stdout=subprocess.PIPE, text=True)
    stack.callback(holder.wait)
    stack.callback(holder.kill)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return ["task=gsm8k", "n=3", DIR]


# --- 6 interpolation --------------------------------------------------------------------

def _priced(folder: Path, stack: contextlib.ExitStack) -> list[str]:
    """A task file whose prompt holds `${price}`: text, as the rest of a task file is."""
    import yaml

    from tests.conftest import portable_task

    task = portable_task("gsm8k")
    task["prompts"]["free"] = "It costs ${price}. " + task["prompts"]["free"]
    (folder / "task").mkdir()
    (folder / "task" / "priced.yaml").write_text(yaml.safe_dump(task), encoding="utf-8")
    return ["--config-dir", str(folder), "task=priced", "n=3", "mode=check", DIR]


def _overrides(*extra: str):
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        return ["task=gsm8k", "n=3", "mode=check", DIR, *extra]
    return make


S = "$"
DOUBLING = ["+b0=xxxxxxxx", *(f"+b{i}={S}{{b{i - 1}}}{S}{{b{i - 1}}}" for i in range(1, 64))]
LISTS = ["+c0=[1,2]", *(f"+c{i}=[{S}{{c{i - 1}}},{S}{{c{i - 1}}}]" for i in range(1, 64))]


# --- 10 plugins -------------------------------------------------------------------------

RAISES = "raise RuntimeError('plugin broken\\nat import')\n"
EXITS = "import sys\nsys.exit(0)\n"


def _plugin(group: str, source: str, args: list[str]):
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        _install(folder, group, "zoo", "zoo_plugin", source)
        return args
    return make


OUTSIDE = """
    from vbw.report.writers import Output

    class Plugin(Output):
        name, file = "zoo", {file!r}

        @staticmethod
        def render(s):
            return "written\\n"
"""


def _hydra_plugin(source: str):
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        pkg = folder / "hydra_plugins" / "zoo_hydra"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(source, encoding="utf-8")
        # mode=replay: mode=auto's note on the replay it re-scores would be a stderr line too
        return ["task=gsm8k", "n=3", "mode=replay", DIR]
    return make


CASES = [
    Case("4 run dir claim", "hydra.run.dir held by a live run", _held, seconds=20),
    Case("6 interpolation", "${price} in a --config-dir task file's prompt is text",
         _priced, rc=0, lines=0, seconds=20),
    Case("6 interpolation", "a string doubled by ${b}${b} 63 times in overrides",
         _overrides(*DOUBLING), seconds=20),
    Case("6 interpolation", "a list doubled by [${c},${c}] 63 times in overrides",
         _overrides(*LISTS), seconds=20),
    Case("6 interpolation", "an interpolation cycle", _overrides("+a=${b}", "+b=${a}"),
         seconds=20),
    Case("6 interpolation", "an oc.decode parse error",
         _overrides('+a=${oc.decode:"{"}'), seconds=20),
    Case("6 interpolation", "hydra.run.dir with an oc.decode parse error",
         _overrides('hydra.run.dir=${oc.decode:"{"}'), seconds=20),
    Case("6 interpolation", "an override nested 3,000 deep",
         _overrides("+a=" + "[" * 3000 + "]" * 3000), seconds=20),
    Case("6 interpolation", "-m n=range(1,3000000)",
         lambda folder, stack: ["-m", "task=gsm8k", "n=range(1,3000000)", "mode=check",
                                "hydra.sweep.dir=sweep"], seconds=20),
    Case("10 plugins", "mode= names a plugin that raises at import",
         _plugin("vbw.modes", RAISES, ["task=gsm8k", "n=3", "mode=zoo", DIR]), seconds=20),
    Case("10 plugins", "a mode typo reads a plugin that raises at import",
         _plugin("vbw.modes", RAISES, ["task=gsm8k", "n=3", "mode=replya", DIR]), seconds=20),
    Case("10 plugins", "a mode typo reads a plugin that calls sys.exit(0) at import",
         _plugin("vbw.modes", EXITS, ["task=gsm8k", "n=3", "mode=replya", DIR]), seconds=20),
    Case("10 plugins", "outputs= names a plugin that calls sys.exit(0) at import",
         _plugin("vbw.outputs", EXITS, ["task=gsm8k", "n=3", "outputs=[json,zoo]", DIR]),
         seconds=20),
    Case("10 plugins", "engine.name= names a plugin that raises at import",
         _plugin("vbw.engines", RAISES, ["task=gsm8k", "n=3", "mode=live",
                                         "engine.name=zoo", DIR]), seconds=20),
    Case("10 plugins", "an output writer's file is an absolute path",
         _plugin("vbw.outputs", OUTSIDE.format(file="/tmp/vbw-hostile-zoo.txt"),
                 ["task=gsm8k", "n=3", "outputs=[json,zoo]", DIR]), seconds=20),
    Case("10 plugins", "an output writer's file climbs out with ..",
         _plugin("vbw.outputs", OUTSIDE.format(file="../escaped.txt"),
                 ["task=gsm8k", "n=3", "outputs=[json,zoo]", DIR]), seconds=20),
    Case("10 plugins", "a hydra_plugins module that raises at import",
         _hydra_plugin(RAISES), seconds=20),
    Case("10 plugins", "a hydra_plugins module that calls sys.exit(0) at import",
         _hydra_plugin(EXITS), seconds=20),
    Case("10 plugins", "a hydra_plugins module that does not import: one warning line",
         _hydra_plugin("import zoo_no_such_module\n"), rc=0, seconds=20),
]


# --- 15 low -----------------------------------------------------------------------------

def _ledger_ids(prefix: str):
    """A replay whose item ids start with `prefix` (the task's id prefix set to match): a
    ledger.csv line starting with it would be a formula to a spreadsheet."""
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        from tests.conftest import REPLAYS

        text = (REPLAYS / "gsm8k/qwen2_5_0_5b/outlines.jsonl").read_text(encoding="utf-8")
        (folder / "r.jsonl").write_text(text.replace('"gsm8k_test_', f'"{prefix}'),
                                        encoding="utf-8")
        return ["task=gsm8k", "n=5", "mode=replay", "replay=r.jsonl",
                f"task.dataset.id.prefix='{prefix}'", DIR]
    return make


CASES += [
    Case("15 low", f"ledger.csv ids starting with {prefix!r}", _ledger_ids(prefix), rc=0,
         lines=0, seconds=20, secrets=(f"\n{prefix}",))
    for prefix in (" =cmd|", "＝cmd|", "\u3000＋cmd|", "－cmd|", "＠cmd|")
]
