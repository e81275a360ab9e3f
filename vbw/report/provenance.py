"""One line on where a replay's texts came from, for report.md and report.json.

The line states what the header records and names what it does not ("hardware not
recorded") instead of printing "?": a replay written by another stack may record no more
than its task and arms, and a report must say so in words. The replays vbw writes (and
validbutwrong 0.1's) record everything, and their line reads as it always has.
"""

from __future__ import annotations

from collections.abc import Sequence

from vbw.replay import EndV1, ReplayHeader

# a sampled server run's seed probe (vbw.generate.canary.seed_probe), when not honoured
SEED_CLAUSES = {
    "ignored": "the server gave other texts for the same sampling seed (probed at the "
               "start): its samples are reproducible only as far as it allows",
    "undetermined": "whether the server honours the sampling seed could not be told (the "
                    "probe's texts were all alike): its samples may not be reproducible"}
NO_TASK_HASH = ("task hash not recorded, so it could not be verified that the texts were "
                "generated for this version of the task")


def provenance(header: ReplayHeader, seconds: Sequence[float | None],
               end: EndV1 | None) -> str:
    """When, on what, with what and by what the texts were generated, as far as recorded;
    `seconds`: each item line's recorded item_seconds (None: not recorded)."""
    when = _when(header, seconds, end)
    cpu = header.hardware.cpu if header.hardware else None
    model = (header.model.file or header.model.name) if header.model else None
    who = _generator(header)
    recorded = {"generation time": when, "hardware": cpu, "engine": header.engine,
                "model": model, "generator": who}
    missing = [name for name, value in recorded.items() if value is None]
    repack = None if header.repack is None else f"repack {'on' if header.repack else 'off'}"
    batch = (f"{header.batch} sequences per decode"
             f"{', flash attention' if header.flash_attn else ''}" if header.batch else None)
    engine_model = ", ".join(x for x in (header.engine, model, repack, batch)
                             if x is not None)
    known = [when or "generated", f"on {cpu}" if cpu else "",
             f"({engine_model})" if engine_model else "", who or ""]
    clauses = [" ".join(k for k in known if k)] if len(missing) < len(recorded) else []
    if (sampled := _sampled(header.decoding or {})) is not None:
        clauses.append(sampled)
    if missing:
        clauses.append(f"{_listed(missing)} not recorded")
    if header.version >= 1 and header.task_hash is None:
        clauses.append(NO_TASK_HASH)
    if header.backend is not None and header.backend.seed in SEED_CLAUSES:
        clauses.append(SEED_CLAUSES[header.backend.seed])
    if header.backend is not None and header.backend.masked:
        clauses.append(f"credentials masked as *** in the texts: {header.backend.masked}")
    return "; ".join(clauses)


def _when(h: ReplayHeader, seconds: Sequence[float | None], end: EndV1 | None) -> str | None:
    if h.version == 0:  # 0.1 recorded one run's start and wall time in the header
        if h.started is None:
            return None
        return f"generated {h.started}" + (f" in {end.wall_seconds} s" if end else "")
    # Summed item seconds, not the end marker's wall time: a resumed replay's wall time
    # covers only its last run.
    timed = [s for s in seconds if s is not None]
    busy = f"{sum(timed):.0f} s summed over {len(timed)} items" if timed else None
    if h.started and end:
        return f"generated {h.started} to {end.ended}" + (f", {busy}" if busy else "")
    if h.started:
        return f"generation started {h.started}, no end line (unfinished, or not recorded)"
    if end:
        return f"generation ended {end.ended}" + (f", {busy}" if busy else "")
    return f"generation took {busy}" if busy else None


def _generator(h: ReplayHeader) -> str | None:
    versions = h.versions or {}
    if h.version == 0:
        return f"by validbutwrong {versions.get('validbutwrong') or '0.1'}"
    if "vbw" in versions:
        return f"by vbw {versions['vbw'] or '(version not recorded)'}"
    if versions:
        return "with " + ", ".join(f"{k} {v}" if v else k for k, v in versions.items())
    return None


def _number(value: object) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f"{value:g}" if ok else None


def _sampled(dec: dict) -> str | None:
    """A sampled run's clause: temperature, the truncations that are on, the seed (a
    greedy run's line reads as it always has)."""
    if dec.get("strategy") != "sample":
        return None
    t = _number(dec.get("temp", dec.get("temperature"))) or "(not recorded)"
    off = {"top_k": 0, "top_p": 1, "min_p": 0}
    cuts = [f"{k} {_number(dec[k])}" for k in off
            if _number(dec.get(k)) is not None and dec[k] != off[k]]
    seed = _number(dec.get("seed"))
    tail = ", ".join([*cuts, f"seed {seed}" if seed is not None else "seed not recorded"])
    return f"sampled at temperature {t} ({tail})"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
