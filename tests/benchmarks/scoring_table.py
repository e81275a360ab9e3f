"""docs/performance.md's replay-scoring block, from tests/benchmarks/scoring.json and,
beside each figure, scoring.previous.json (the figure it replaces: the same script on the
revision before the change, `bench_scoring --previous REV`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.benchmarks.startup_table import _get

HERE = Path(__file__).resolve().parent
NOW, WAS = HERE / "scoring.json", HERE / "scoring.previous.json"
TARGET_ITEMS, TARGET_S, TARGET_MIB, TARGET_RATIO = 100_000, 10.0, 400.0, 5.0
# in-process steps that hold others (their time is counted in the steps inside them)
_OUTER = ("total in process", "Hydra's job (run_job, vbw inside it)",
          "every composition (Hydra's loader)", "write the reports (report.html's data included)")


def _was(new: float | None, old: float | None, fmt: str) -> str:
    """`new (was old)`: the gain beside the figure (issue 10: previous values stay visible)."""
    if new is None:
        return "n/a"
    return format(new, fmt) + (f" (was {format(old, fmt)})" if old is not None else "")


def verdict(big: dict | None) -> str:
    """The targets' one line each: met or missed, and what bounds a missed one."""
    if big is None:
        return f"Targets (issues 10 and 22): not measured at {TARGET_ITEMS:,} items."
    wall, rss, ratio = big["wall_s"], big["peak_rss_mib"], big.get("ratio_wall")
    phases = big.get("phases_s") or {}
    steps = sorted(((v, k) for k, v in phases.items() if k not in _OUTER), reverse=True)[:3]
    bounds = "; ".join(f"{k} {v:.1f} s" for v, k in steps) or "not measured"
    lines = [f"- {TARGET_ITEMS:,} items x 6 arms in <= {TARGET_S:.0f} s: {wall:.1f} s, "
             + ("**met**." if wall <= TARGET_S else
                f"**missed**; the largest steps (wall, in one process): {bounds}."),
             f"- peak RSS <= {TARGET_MIB:.0f} MiB: {rss:.0f} MiB, "
             + ("**met**." if rss <= TARGET_MIB else
                "**missed**; what stays in memory is the task's dataset rows (read whole), "
                "the per-item ledger and report.html's kept texts.")]
    if ratio is None:
        lines.append(f"- within {TARGET_RATIO:g}x the json-decode floor: not measured "
                     "(these figures predate the floor).")
    else:
        floor = big["floor"]["wall_s"]
        lines.append(f"- within {TARGET_RATIO:g}x the json-decode floor ({floor:.2f} s): "
                     f"{ratio:.2f}x, " + ("**met**." if ratio <= TARGET_RATIO else
                                           f"**missed**; the largest steps: {bounds}."))
    return "Targets (issues 10 and 22):\n\n" + "\n".join(lines)


def scoring_table() -> str:
    data = json.loads(NOW.read_text(encoding="utf-8"))
    prev = json.loads(WAS.read_text(encoding="utf-8")) if WAS.is_file() else {}
    m = data["machine"]
    runs = max((s.get("runs", 1) for s in data["synthetic"]), default=1)
    runs = runs if runs > 1 else 0
    old_syn = {s["items"]: s for s in prev.get("synthetic", [])}
    since = (f"the same script on revision `{prev['revision']}` (`--previous "
             f"{prev['revision']}`), measured {prev.get('measured', '-')}"
             if "revision" in prev else
             f"measured {prev.get('measured', '-')} before replay scoring was streamed")
    lines = [f"Measured {data['measured']} on this project's reference machine "
             f"({m['cores']} cores, {m['cpu']}, Python {m['python']}) by "
             "`python -m tests.benchmarks.bench_scoring`"
             + (f" (1-minute load average {m['load_1min']:.1f} when it started)"
                if "load_1min" in m else "")
             + f"; \"was\" is the figure it replaces, {since}. The floor is a fresh "
             "process decoding every line of the same replay with Python's `json`, "
             + (f"run alternately with `vbw` {runs} times (times are medians, the peak "
                "RSS the largest):" if runs else "measured right after each run:"), "",
             "| what | wall (s) | CPU (s) | peak RSS (MiB) | µs per item and arm "
             "| json floor, wall (s) | over the floor |",
             "|---|---|---|---|---|---|---|"]
    for s in data["synthetic"]:
        o = old_syn.get(s["items"], {})
        lines.append(f"| `vbw` on a synthetic replay, {s['items']:,} items x {s['arms']} arms | "
                     f"{_was(s['wall_s'], o.get('wall_s'), '.1f')} | "
                     f"{_was(s.get('cpu_s'), o.get('cpu_s'), '.1f')} | "
                     f"{_was(s['peak_rss_mib'], o.get('peak_rss_mib'), '.0f')} | "
                     f"{_was(s['us_per_item_arm'], o.get('us_per_item_arm'), '.1f')} | "
                     f"{_was(_get(s, 'floor', 'wall_s'), None, '.2f')} | "
                     f"{_was(s.get('ratio_wall'), o.get('ratio_wall'), '.1f')} |")
    syn = data["synthetic"]
    if len(syn) >= 2:
        a, b = syn[0], syn[-1]
        lines += ["", f"From {a['items']:,} to {b['items']:,} items ({b['items'] / a['items']:.0f}x) "
                  f"the wall time grows {b['wall_s'] / a['wall_s']:.1f}x and the peak RSS "
                  f"{b['peak_rss_mib'] / a['peak_rss_mib']:.1f}x."]
    big = next((s for s in syn if s["items"] == TARGET_ITEMS), None)
    lines += ["", verdict(big)]
    return "\n".join(lines + _bench_modes(data, prev))


# mode=compare and mode=merge at scale (issue 22): "the same class" as scoring one replay
# of that size means at most this many times its wall time (compare scores two replays,
# merge reads every shard, writes the run's replay, then scores it) and its peak RSS
CLASS_WALL, CLASS_RSS = 2.5, 1.25
_MODE_ROW = {"compare": "`vbw mode=compare` of two synthetic replays of {n:,} items x {a} arms",
             "merge-own": "`vbw mode=merge` of 4 shards of {q:,} items x {a} arms holding the "
                          "synthetic replay's texts, then scoring the merged {n:,}",
             "merge": "`vbw mode=merge` of 4 shards of {q:,} items x {a} arms holding SmolLM2's "
                      "texts (a live run's lines), then scoring the merged {n:,}",
             "merged": "`vbw` on the replay that merge joined ({n:,} items x {a} arms of "
                       "SmolLM2's texts)"}


def _held_to(m: dict, modes: list[dict], scoring: dict) -> tuple[dict | None, str]:
    """The scoring run a mode is held to, of the same texts, and its name: the synthetic
    replay's for compare and a merge of its own texts; for a merge of SmolLM2's texts,
    the replay it joined (their texts take longer to score than the synthetic ones)."""
    if m["mode"] == "merge":
        return (next((x for x in modes if x["mode"] == "merged" and x["items"] == m["items"]),
                     None), "scoring the replay it joined")
    return scoring.get(m["items"]), "scoring the synthetic replay"


def _bench_modes(data: dict, prev: dict) -> list[str]:
    """The compare and merge rows, measured in the same run as the scoring rows, each
    with its verdict against the scoring row of the same size."""
    modes = data.get("modes") or []
    if not modes:
        return []
    old = {(m["mode"], m["items"]): m for m in prev.get("modes", [])}
    scoring = {s["items"]: s for s in data["synthetic"]}
    lines = ["", "The other modes that read replays of that size, in the same run:", "",
             "| what | wall (s) | CPU (s) | peak RSS (MiB) | µs per item and arm |",
             "|---|---|---|---|---|"]
    verdicts = []
    for m in modes:
        o = old.get((m["mode"], m["items"]), {})
        what = _MODE_ROW[m["mode"]].format(n=m["items"], q=m["items"] // 4, a=m["arms"])
        lines.append(f"| {what} | {_was(m['wall_s'], o.get('wall_s'), '.1f')} | "
                     f"{m['cpu_s']:.1f} | {_was(m['peak_rss_mib'], o.get('peak_rss_mib'), '.0f')}"
                     f" | {_was(m['us_per_item_arm'], o.get('us_per_item_arm'), '.1f')} |")
        base, name = _held_to(m, modes, scoring)
        if base is not None and m["mode"] != "merged":
            t, r = m["wall_s"] / base["wall_s"], m["peak_rss_mib"] / base["peak_rss_mib"]
            met = t <= CLASS_WALL and r <= CLASS_RSS
            verdicts.append(f"{m['mode']} {t:.2f}x the time and {r:.2f}x the peak RSS of "
                            f"{name}, " + ("met" if met else "**missed** (it takes "
                                           f"{m['wall_s'] - base['wall_s']:.1f} s beyond "
                                           "that scoring)"))
    if verdicts:
        lines += ["", f"Target (issue 22): compare and merge within the class of scoring one "
                  f"replay of that size, of the same texts (at most {CLASS_WALL:g}x its wall "
                  f"time and {CLASS_RSS:g}x its peak RSS): " + "; ".join(verdicts) + "."]
    return lines
