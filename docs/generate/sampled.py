"""docs/results.md's sampled-decoding blocks: a committed k-sample replay against the
greedy replay of the same items, engine and token caps, each scored from its file.

Per arm: greedy accuracy, sample 1's, the mean over k, pass@k, the majority vote, all-k,
validity; the greedy -> sampled change per arm on per-item fractions (the sign-flip test,
as mode=compare pairs a k = 1 replay with a k-sample one); the headline comparisons of
the sampled run; the grammar's tax by outcome, greedy and sampled.
"""

from __future__ import annotations

import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _scored(path: Path):
    from vbw.config import Bootstrap
    from vbw.replay.stream import open_replay
    from vbw.score.metrics import build_report
    from vbw.score.stream import score_stream
    from vbw.task.arms import parse_arm
    from vbw.task.runner import load_task

    stream = open_replay(path)
    task = load_task(ROOT / "conf" / "task" / f"{stream.header.task}.yaml")
    arms = [parse_arm(k) for k in stream.header.arms or []]
    n = stream.header.n
    scored = score_stream(task, stream, arms, n, io.StringIO())
    b = Bootstrap()
    report = build_report(scored.states, task=task.name, label=task.spec.label, mode="replay",
                          meta={}, source=str(path), provenance="", seed=b.seed,
                          resamples=b.resamples, n_task=len(scored.states.ids)
                          + len(scored.states.excluded) + len(scored.missing),
                          missing=scored.missing)
    return scored.states, report, stream.header


def _tax_cell(t) -> str:
    from vbw.report.tax import OUTCOMES

    if t is None:
        return "n/a"
    parts = []
    for o in OUTCOMES:
        f = t.by_outcome[o]
        parts.append(f"{o.replace('_', '-')} {f.mean:.1f} ({f.items})" if f.items else
                     f"{o.replace('_', '-')} none")
    return "; ".join(parts)


def block(task: str, greedy: str, sampled: str) -> str:
    """The block for one task: `greedy` and `sampled` are replay files under
    replays/<task>/smollm2_135m/."""
    from vbw.report.numbers import pct
    from vbw.report.markdown import rate_cell
    from vbw.report.samples import verdict as sampled_verdict
    from vbw.report.numbers import pts
    from vbw.score.bootstrap import key_rng
    from vbw.score.samples import MC_KEY, counts_of, paired_fractions

    folder = ROOT / "replays" / task / "smollm2_135m"
    g_states, g, g_head = _scored(folder / greedy)
    s_states, s, s_head = _scored(folder / sampled)
    assert g_states.ids == s_states.ids, "the two replays must score the same items"
    k, n = s.samples.k, s.n
    dec = s_head.decoding or {}
    lines = [f"| arm | greedy | sample 1 | mean of {k} | pass@{k} | majority (tied) | "
             f"all {k} | validity, mean of {k} |", "|---|---|---|---|---|---|---|---|"]
    for key, a in s.samples.arms.items():
        lines.append(f"| `{key}` | {pct(g.arms[key].answer_accuracy.rate)} | "
                     f"{pct(s.arms[key].answer_accuracy.rate)} | {rate_cell(a.accuracy)} | "
                     f"{pct(a.pass_at[str(k)].rate)} | {pct(a.majority.rate)} "
                     f"({a.majority_tied}) | {pct(a.all_right.rate)} | "
                     f"{pct(a.schema_validity.rate) if a.schema_validity else 'n/a'} |")
    lines += ["", f"Greedy → sampled (mean of {k}), {s.correctness_label}, paired per item "
              "(sign-flip test on per-item fractions, as `mode=compare` pairs the two "
              "replays):", ""]
    for j, arm in enumerate(s_states.arms):
        (gc, gk), (sc, sk) = counts_of(g_states, j), counts_of(s_states, j)
        key = f"compare {arm.key}"
        d = paired_fractions(gc["answer_accuracy"], gk, sc["answer_accuracy"], sk,
                             key_rng(42, key), 2000, key_rng(42, MC_KEY + key))
        lines.append(f"- `{arm.key}`: {sampled_verdict(d, n)}; 95% CI [{pts(d.ci95[0])}, "
                     f"{pts(d.ci95[1])}]; items up / down: {d.more} / {d.fewer}")
    lines += ["", f"Within the sampled run ({k} samples per item), on per-item fractions:", ""]
    for c in s.samples.comparisons:
        d = c.deltas["answer_accuracy"]
        lines.append(f"- `{c.from_}` → `{c.to}`: {s.correctness_label} "
                     f"{sampled_verdict(d, n)}; 95% CI [{pts(d.ci95[0])}, {pts(d.ci95[1])}]")
    lines += ["", "The grammar's tax, mean nats per generation by outcome (generations):", "",
              "| arm | greedy | sampled, every sample |", "|---|---|---|"]
    for key, a in s.samples.arms.items():
        if a.tax is not None or key in g.tax:
            lines.append(f"| `{key}` | {_tax_cell(g.tax.get(key))} | {_tax_cell(a.tax)} |")
    trunc = ", ".join(f"{k_}={dec[k_]}" for k_ in ("top_k", "top_p", "min_p") if k_ in dec)
    caps = s_head.max_tokens or {}
    lines += ["", f"N={n}, k={k}, temperature {dec.get('temp')} ({trunc}), seed "
              f"{dec.get('seed')}, token caps free {caps.get('free')} / json "
              f"{caps.get('json')} / package {caps.get('package')}. Sources: "
              f"`replays/{task}/smollm2_135m/{greedy}` (greedy) and "
              f"`replays/{task}/smollm2_135m/{sampled}` (sampled), engine "
              f"{s_head.engine}."]
    return "\n".join(lines)


REPLAYS = {"gsm8k": ("llguidance-k1.jsonl", "llguidance-k5.jsonl"),
           "bfcl_simple": ("llguidance-k1.jsonl", "llguidance-k5.jsonl")}
