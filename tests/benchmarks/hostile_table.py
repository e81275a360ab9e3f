"""The README's hostile-output block, from tests/benchmarks/hostile.json."""

from __future__ import annotations

import json
from pathlib import Path

HOSTILE = Path(__file__).resolve().parent / "hostile.json"


def hostile_table() -> str:
    d = json.loads(HOSTILE.read_text())
    m = d["machine"]
    small, large = (str(s) for s in (d["sizes_mb"][0], d["sizes_mb"][-1]))
    before, after = d["load_average_1min"]
    lines = [f"Measured {d['measured']} on {m['cores']} cores ({m['cpu']}, Python {m['python']}; "
             f"1-minute load average {before} before, {after} after) by "
             f"`python -m tests.benchmarks.bench_hostile` (best of {d['runs']}, in process):", "",
             f"| step | hostile output | {small} MB (s) | {large} MB (s) | s per MB | "
             f"{large} MB / {small} MB |", "|---|---|---|---|---|---|"]
    for row in d["steps"]:
        a, b = row["seconds"][small], row["seconds"][large]
        growth = f"{b / a:.1f}x" if a >= 0.001 else "-"
        lines.append(f"| {row['step']} | {row['shape']} | {_s(a)} | {_s(b)} | "
                     f"{_s(b / int(large))} | {growth} |")
    runs = ", ".join(f"`{e['task']}` {e['wall_s']:.1f} s ({e['hostile_outputs']} outputs of "
                     f"{e['mb_each']} MB)" for e in d["end_to_end"])
    lines += ["", f"A time growing about {int(large) // int(small)}x from {small} to {large} MB is "
              "linear. End to end, `python -m vbw task=<task> replay=<file>` (a fresh process) on "
              "the bundled 200-item replay with one hostile output per arm, each in its own "
              f"item: {runs}."]
    page = d.get("page_memory")
    if page is not None:
        lines += ["", f"Page memory: the same GSM8K replay with every text made of `<` "
                  f"({page['replay_mb']:.0f} MB; escaped on the page, each `<` is 6 characters) "
                  f"writes a {page['page_mb']:.0f} MB report.html at a peak RSS of "
                  f"{page['peak_rss_mib']} MiB ({page['rss_per_page']:.1f}x the page, the "
                  f"whole run included), in {page['wall_s']:.1f} s"
                  + (f" (measured {page['measured']}, 1-minute load average "
                     f"{page['load_average_1min']})." if "measured" in page else ".")]
    if "regexes" in d:
        lines += ["", *_regex_rows(d["regexes"])]
    if "server_deadlines" in d:
        lines += ["", *server_deadline_table(d["server_deadlines"])]
    if "round4" in d:
        lines += ["", *round4_table(d["round4"])]
    return "\n".join(lines)


def round4_table(d: dict) -> list[str]:
    """Every end-to-end hostile case of tests/hostile4, against its bounds."""
    before, after = d["load_average_1min"]
    wanted = sum(r["ok"] for r in d["rows"])
    lines = [f"Hostile input, round 4: {wanted} of {len(d['rows'])} cases end as wanted, each "
             "`python -m vbw` in a fresh process, start-up included (measured "
             f"{d['measured']} by `python -m tests.benchmarks.bench_hostile round4`; 1-minute "
             f"load average {before} before, {after} after):", "",
             "| class | case | exit (wanted) | stderr lines | s (bound) | peak RSS MiB (bound) |",
             "|---|---|---|---|---|---|"]
    for r in d["rows"]:
        case = r["case"].replace("|", "\\|")
        lines.append(f"| {r['class']} | {case} | {r['exit']} ({r['want_exit']}) | "
                     f"{r['stderr_lines']} | {r['seconds']:.2f} ({r['bound_s']:g}) | "
                     f"{r['peak_rss_mib']} ({r['bound_mib']:g}) |")
    return lines


def _regex_rows(r: dict) -> list[str]:
    """Task regexes and schema patterns that backtrack on Python's re, on RE2."""
    before, after = r["load_average_1min"]
    cap = r["old_cap_s"]
    lines = [f"Regexes a task declares, on RE2 (measured {r['measured']}, best of {r['runs']}, "
             f"1-minute load average {before} before, {after} after; Python's re in a fresh "
             f"process, stopped at {cap:g} s):", "",
             "| where | pattern | hostile output | RE2 (s) | Python's re (s) |",
             "|---|---|---|---|---|"]
    for row in r["rows"]:
        old = row["python_re_seconds"]
        old_cell = f"> {cap:g} (stopped)" if old is None else _s(old)
        pattern = row["pattern"].replace("|", "\\|")
        lines.append(f"| {row['kind']} | `{pattern}` | {row['output']} | {_s(row['seconds'])} "
                     f"| {old_cell} |")
    e = r["end_to_end"]
    lines += ["", f"End to end, the bundled GSM8K task with all {e['patterns']} task regexes as "
              f"steps of its answer chain, on its {e['items']}-item replay with "
              f"{e['hostile_outputs']} of the hostile outputs: {e['wall_s']:.1f} s."]
    return lines


def server_deadline_table(d: dict) -> list[str]:
    """The server backend against a hostile server: how long until it gives up."""
    lines = [f"Server backend against a hostile server on 127.0.0.1 (measured {d['measured']} by "
             "`python -m tests.benchmarks.bench_hostile --server`; `backend.timeout="
             f"{d['deadline_s']:g}`, no retry, the default 16 MiB `backend.max_reply_bytes`):",
             "", "| request | the server sends | outcome | bound (s) | gave up after (s) |",
             "|---|---|---|---|---|"]
    for r in d["rows"]:
        bound = f"{r['bound_s']:g}" if r["bound_s"] is not None else "-"
        lines.append(f"| {r['request']} | {r['shape']} | {r['outcome']} | {bound} | "
                     f"{r['seconds']:.2f} |")
    return lines


def _s(seconds: float) -> str:
    return f"{seconds:.3f}" if seconds >= 0.001 else "< 0.001"
