"""Benchmark: what reading and classifying recorded interventions costs scoring (a script,
not a timed test; issue 19).

    python -m tests.benchmarks.bench_interventions           # 10k and 30k items
    VBW_BENCH_SIZES=20000 VBW_BENCH_REPEAT=5 python -m tests.benchmarks.bench_interventions

Scores bench_scoring's synthetic GSM8K-shaped replays (6 arms, 3 of them enforced) end to
end through `vbw` (a fresh process each), without the field and with it (every enforced
arm given tests.interventions_data's hand-made events: 0 to 2 per arm), alternating the
two so a machine shared with other jobs loads both alike; reports the median CPU seconds
of each, the ratio, and CPU microseconds per item (linear: flat across sizes). CPU time,
not wall time: it is what the process itself spent.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from tests.benchmarks.bench_scoring import _run, _vbw, make_synthetic
from tests.interventions_data import events_for


def _with_events(replay: Path) -> Path:
    out = replay.with_name("replay_iv.jsonl")
    with open(replay, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        dst.write(next(src))
        for i, line in enumerate(src):
            rec = json.loads(line)
            for key, arm in rec["arms"].items():
                if key.startswith(("constrained", "reason_then_constrain")) and arm.get("text"):
                    arm["interventions"] = events_for(i, arm["text"])
            dst.write(json.dumps(rec) + "\n")
    return out


def main() -> None:
    sizes = [int(x) for x in os.environ.get("VBW_BENCH_SIZES", "10000,30000").split(",")]
    repeat = int(os.environ.get("VBW_BENCH_REPEAT", "3"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in sizes:
            task, plain = make_synthetic(work, n)
            marked = _with_events(plain)
            cpu: dict[str, list[float]] = {"without": [], "with": []}
            for _ in range(repeat):
                for name, replay in (("without", plain), ("with", marked)):
                    _, _, c = _run([_vbw(), f"task.files=[{task}]", f"replay={replay}",
                                    f"hydra.run.dir={work}/out{n}{name}"], work)
                    cpu[name].append(c)
            a, b = statistics.median(cpu["without"]), statistics.median(cpu["with"])
            rows.append({"items": n, "cpu_s_without": round(a, 2), "cpu_s_with": round(b, 2),
                         "ratio": round(b / a, 3), "us_per_item_with": round(b / n * 1e6, 1)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    print(json.dumps({"load_1min": round(os.getloadavg()[0], 2), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
