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
FUNCTIONS = [("modes/scoring.py", "_run_tasks")]
TARGET = 500
CEILING = 690
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


def block() -> str:
    got = counts()
    rows = "\n".join(f"| `vbw/{what}` | {n} |" for what, n in got.items())
    total = sum(got.values())
    return ("Lines of vbw that exist for several processes (`python -m docs.generate.forklines`;"
            f" tests/test_forklines.py fails above {CEILING}; the target is {TARGET}, "
            f"{'met' if total <= TARGET else 'not met'}):\n\n"
            f"| module | lines |\n|---|---|\n{rows}\n| total | {total} |")


if __name__ == "__main__":
    print(block())
