"""`python -m docs.generate.forklines`: the lines of vbw spent on using several processes.

Counted as `wc -l` counts them: the whole modules that exist for a second process, plus the
span (first to last line) of the one function that runs tasks side by side. TARGET is
issue 31's goal; tests/test_forklines.py fails above CEILING (no growth while the target is
not met) and when an OS process call (FORK) appears outside vbw/parallel.py.
docs/performance.md's `fork-lines` block shows the count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VBW = ROOT / "vbw"
LAYER = "parallel.py"  # the one module that may fork
MODULES = [LAYER, "score/split.py", "cli/warm_worker.py", "generate/crashguard.py",
           "report/pagedata.py"]
FUNCTIONS = [("modes/scoring.py", "_run_tasks"), ("modes/merge/write.py", "_read_shards"),
             ("generate/conformance/run.py", "check_cases")]
# issue 31: "at most 500 (from ~1,150)", where the ~1,150 were the forking modules "on top
# of vbw/pipes.py", the layer before vbw/parallel.py: the users of the layer, not the layer
TARGET = 500
# the layer and its users together (670 until the 0.1 arm-key split came back; 700 until
# issue 34 added `limited`, each unit in its own time-limited child, for mode=conformance)
CEILING = 760
FORK = re.compile(r"os\.fork|os\.pipe|mmap|multiprocessing|os\.waitpid|os\.kill")


def _span(path: Path, name: str) -> int:
    """Lines from a top-level function's `def` to its last line."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return (node.end_lineno or node.lineno) - node.lineno + 1
    raise LookupError(f"{path}: no function {name}")


def counts(vbw: Path = VBW) -> dict[str, int]:
    """Lines per counted module (and function, as `path:name`), in vbw's folder `vbw`."""
    got = {m: len((vbw / m).read_text(encoding="utf-8").splitlines()) for m in MODULES}
    got.update({f"{m}:{f}": _span(vbw / m, f) for m, f in FUNCTIONS})
    return got


def forks_outside(vbw: Path = VBW) -> list[str]:
    """`path:line` of every OS process call (FORK) in vbw outside the parallel layer."""
    return [f"{p.relative_to(vbw)}:{n}" for p in sorted(vbw.rglob("*.py"))
            if p != vbw / LAYER
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if FORK.search(line)]


def users(got: dict[str, int]) -> int:
    """The lines of the layer's users (every counted module and function but the layer)."""
    return sum(n for what, n in got.items() if what != LAYER)


def block() -> str:
    got = counts()
    rows = "\n".join(f"| `vbw/{what}` | {n} |" for what, n in got.items())
    total, used = sum(got.values()), users(got)
    return ("Lines of vbw that exist for several processes, as `wc -l` counts them (`python -m "
            "docs.generate.forklines`): the parallel layer and what uses it. Issue 31's target "
            f"counts the users, as its ~1,150 counted the forking modules on top of the layer "
            f"before this one: {used} ({'within' if used <= TARGET else '**over**'} its "
            f"{TARGET}); with the layer, {total} (tests/test_forklines.py holds both, the "
            f"total at {CEILING}).\n\n"
            f"| module | lines |\n|---|---|\n{rows}\n| the layer's users | {used} |\n"
            f"| total, with the layer | {total} |")


if __name__ == "__main__":
    print(block())
