"""What scoring reads of a replay's item line, and the fast way to read it.

How it works and why: docs/design.md, section vbw.replay.record.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from vbw.replay.format import ArmRecord, Intervention, ItemRecord

_ITEM_KEYS = frozenset(ItemRecord.model_fields)
_ARM_KEYS = frozenset(ArmRecord.model_fields)
_EVENT_KEYS = frozenset(Intervention.model_fields)
_EVENT_NEEDS = frozenset(k for k, f in Intervention.model_fields.items() if f.is_required())
_NUM = (int, float)
_FINISH = (None, "stop", "length")


Spans = list[tuple[int, int]]  # per intervention: (char, length of the forced text)


class ScoredRecord(NamedTuple):
    """What scoring needs of an item line: id, text per arm key, exclusion, timing, and
    per arm that recorded them its interventions' spans and its tax (an arm absent: not
    recorded)."""

    id: str
    texts: dict[str, str | None]
    unsupported: str | None  # the first arm's unsupported-schema reason, if any
    item_seconds: float | None
    interventions: dict[str, Spans] | None = None  # None: no arm recorded any
    taxes: dict[str, float] | None = None  # per arm that recorded one; None: none did
    # the arm records as decoded (from the model: `arm_dict`'s), read for what the
    # reports show (vbw.score.finish, vbw.score.shown)
    arms: dict[str, Any] | None = None
    # vbw-replay/2: samples 2..k, each as a record of its own (its `samples` None)
    samples: list[ScoredRecord] | None = None


def _number_or_none(v: Any) -> bool:
    return v is None or type(v) in _NUM


# Per ArmRecord field, the types it keeps unchanged (None: any value, as the fast path
# has always taken `tool` and `message`, which scoring never reads).
_ARM_TYPES: dict[str, tuple[type, ...] | None] = {
    "text": (type(None), str), "seconds": _NUM, "compile_seconds": _NUM,
    "n_tokens": (type(None), int), "ttft_seconds": (type(None), *_NUM),
    "finish_reason": (type(None), str), "reuses": (type(None), str),
    "unsupported_schema": (type(None), str), "redacted": (type(None), bool),
    "interventions": (type(None), list), "tax": (type(None), float), "tool": None,
    "message": None}
if _ARM_TYPES.keys() != _ARM_KEYS:  # a new ArmRecord field needs its types here
    raise RuntimeError(f"_ARM_TYPES lacks {sorted(_ARM_KEYS ^ _ARM_TYPES.keys())}")


def _light_arm(a: Any) -> bool:
    """An arm record in exactly the types ArmRecord keeps unchanged: one look-up per
    key it holds (an absent field keeps its default)."""
    if type(a) is not dict:
        return False
    for k, v in a.items():
        allowed = _ARM_TYPES.get(k, False)
        if allowed is False or (allowed is not None and type(v) not in allowed):
            return False
    return a.get("finish_reason") in _FINISH and (a.get("tax") or 0.0) >= 0.0 and (
        (events := a.get("interventions")) is None or _light_events(events))


def _light_event(e: Any) -> bool:
    """An intervention in exactly the types Intervention keeps unchanged (a float field
    given as an int is left to the model, which makes it a float)."""
    return (type(e) is dict and _EVENT_NEEDS <= e.keys() <= _EVENT_KEYS
            and type(e["pos"]) is int and e["pos"] >= 0
            and type(e["char"]) is int and e["char"] >= 0
            and type(e["wanted"]) is str and type(e["forced"]) is str
            and type(e["lp_wanted"]) is float and type(e["lp_forced"]) is float
            and type(e.get("allowed_mass", 0.0)) in (float, type(None))
            and all(type(e.get(k)) in (int, type(None)) for k in ("wanted_id", "forced_id")))


def _light_events(events: Any) -> bool:
    return type(events) is list and all(map(_light_event, events))


def _spans(arms: dict[str, Any]) -> dict[str, Spans] | None:
    """Per arm that recorded interventions, their (char, len(forced)) spans."""
    out = {k: [(e["char"], len(e["forced"])) for e in a["interventions"]]
           for k, a in arms.items() if a.get("interventions") is not None}
    return out or None


def light(obj: Any) -> ScoredRecord | None:
    """The record, if the line is in the plain shape (see the module docstring)."""
    if type(obj) is not dict or not obj.keys() <= _ITEM_KEYS:
        return None
    item_id, arms, secs = obj.get("id"), obj.get("arms"), obj.get("item_seconds")
    if type(item_id) is not str or type(arms) is not dict or not _number_or_none(secs):
        return None
    if obj.get("prompt_hash") is not None and type(obj.get("prompt_hash")) is not str:
        return None
    extra = None
    if (samples := obj.get("samples")) is not None:
        if type(samples) is not list:
            return None
        extra = [light({"id": item_id, "arms": arms_s}) for arms_s in samples]
        if None in extra:
            return None
    texts: dict[str, str | None] = {}
    taxes: dict[str, float] = {}
    unsupported, marked = None, False
    for k, a in arms.items():  # one pass: every arm plain, its text, the first exclusion
        if not _light_arm(a):
            return None
        texts[k] = a.get("text")
        if unsupported is None and a.get("unsupported_schema"):
            unsupported = a["unsupported_schema"]
        marked = marked or "interventions" in a
        if a.get("tax") is not None:
            taxes[k] = a["tax"]
    return ScoredRecord(item_id, texts, unsupported, None if secs is None else float(secs),
                        _spans(arms) if marked else None, taxes or None, arms,
                        extra)  # type: ignore[arg-type]


def as_scored(rec: ItemRecord) -> ScoredRecord:
    spans = {k: [(e.char, len(e.forced)) for e in a.interventions]
             for k, a in rec.arms.items() if a.interventions is not None}
    taxes = {k: a.tax for k, a in rec.arms.items() if a.tax is not None}
    extra = None if rec.samples is None else \
        [as_scored(ItemRecord(id=rec.id, arms=arms)) for arms in rec.samples]
    return ScoredRecord(rec.id, {k: a.text for k, a in rec.arms.items()}, rec.unsupported,
                        rec.item_seconds, spans or None, taxes or None,
                        {k: arm_dict(a) for k, a in rec.arms.items()}, extra)


def arm_dict(a: ArmRecord) -> dict[str, Any]:
    """What the reports read of an arm record, as its decoded line would hold it."""
    events = None if a.interventions is None else [e.model_dump() for e in a.interventions]
    return {"text": a.text, "finish_reason": a.finish_reason,
            "unsupported_schema": a.unsupported_schema, "interventions": events,
            "n_tokens": a.n_tokens, "ttft_seconds": a.ttft_seconds, "reuses": a.reuses,
            # defaults (0.0) are not timings: only what the line held
            **{k: getattr(a, k) for k in ("seconds", "compile_seconds")
               if k in a.model_fields_set}}


def scored_record(obj: dict[str, Any]) -> ScoredRecord:
    """What scoring reads of an item line, from its values as json reads them and known
    to be a valid item line (mode=merge scores the lines it writes: vbw.modes.merge.write)."""
    return light(obj) or as_scored(ItemRecord.model_validate(obj))
