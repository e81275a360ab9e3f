"""Benchmark: vbw against its predecessor validbutwrong 0.1.1, side by side (one run).

    pip install 'validbutwrong[live]==0.1.1' into its own venv, then
    VBW_PREDECESSOR=/path/to/venv/bin/validbutwrong python -m tests.benchmarks.bench_predecessor

Both generate the first 8 BFCL simple items live (all four arms) with SmolLM2-135M on 2
threads, outlines engine, on an idle machine, one after the other; the predecessor runs
as its own documented command (`validbutwrong run --task bfcl-simple --live --n 8
--model <gguf> --threads 2`), used as a black box. Reported: wall seconds per item of each
(a fresh process, as a user runs it: imports, model load and canary included), the
seconds per item recorded in each replay (generation only), and how many generations
(item x arm) are byte-identical between the two replays.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "predecessor.json"
N = int(os.environ.get("VBW_BENCH_N", "8"))
THREADS = "2"


def _timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"failed ({done.returncode}): {' '.join(args)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def _replay(folder: Path) -> Path:
    found = sorted(p for p in folder.rglob("*.jsonl"))
    if not found:
        raise SystemExit(f"no replay written under {folder}")
    return found[0]


def _texts(path: Path) -> tuple[dict[tuple[str, str], str], float]:
    from vbw.replay.io import read_replay

    replay = read_replay(path)
    texts = {(r.id, key): arm.text for r in replay.records for key, arm in r.arms.items()
             if arm.text is not None}
    seconds = sum(a.seconds or 0.0 for r in replay.records for a in r.arms.values())
    return texts, seconds


def main() -> None:
    from vbw.config import bundled_model
    from vbw.generate.model import resolve_model

    predecessor = os.environ.get("VBW_PREDECESSOR") or shutil.which("validbutwrong")
    if not predecessor:
        raise SystemExit("set VBW_PREDECESSOR to validbutwrong 0.1.1's console script")
    gguf = resolve_model(bundled_model("smollm2_135m")).path
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old_wall = _timed([predecessor, "run", "--task", "bfcl-simple", "--live", "--n", str(N),
                           "--model", str(gguf), "--threads", THREADS, "--out",
                           str(work / "old")], work)
        new_wall = _timed([sys.executable, "-m", "vbw", "mode=live", "task=bfcl_simple",
                           f"n={N}", "model=smollm2_135m", "engine=outlines",
                           f"threads={THREADS}", f"hydra.run.dir={work / 'new'}"], work)
        old_texts, old_gen = _texts(_replay(work / "old"))
        new_texts, new_gen = _texts(_replay(work / "new"))
    common = sorted(set(old_texts) & set(new_texts))
    same = sum(old_texts[k] == new_texts[k] for k in common)
    result = {"measured": time.strftime("%Y-%m-%d"), "items": N, "threads": int(THREADS),
              "engine": "outlines",
              "predecessor": {"wall_s": round(old_wall, 1), "s_per_item": round(old_wall / N, 2),
                              "generation_s_per_item": round(old_gen / N, 2)},
              "vbw": {"wall_s": round(new_wall, 1), "s_per_item": round(new_wall / N, 2),
                      "generation_s_per_item": round(new_gen / N, 2)},
              "speedup": round(old_wall / new_wall, 2),
              "generation_speedup": round(old_gen / new_gen, 2) if new_gen else None,
              "generations": len(common), "identical": same,
              "only_in_one": len(set(old_texts) ^ set(new_texts))}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
