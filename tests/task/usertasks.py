"""User tasks of the shapes that mode=check used to refuse, written to a folder as a user
would: YAML task, JSONL data, and (for scoring) a replay written by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

PROMPTS = {
    "free": "{{ text }}\n\nFinish with a final line 'Answer: <answer>'.",
    "json": "{{ text }}\n\nRespond with ONLY a JSON object matching this JSON Schema:\n"
            "{{ schema | json }}",
    "package": "Now give the answer as ONLY a JSON object matching this JSON Schema:\n"
               "{{ schema | json }}",
}

TICKETS = [("billing", 19.99, "I was charged $19.99 twice this month."),
           ("technical", 0, "The app crashes when I open settings."),
           ("account", 0, "How do I change the e-mail on my account?"),
           ("billing", 5.0, "Refund the $5 late fee please."),
           ("technical", 0, "Login page shows error 500."),
           ("account", 0, "Please delete my account."),
           ("billing", 120.5, "My invoice says $120.50, I expected $100."),
           ("technical", 0, "Sync stopped working after the update."),
           ("account", 0, "I want to rename my username."),
           ("billing", 42, "Why was my card charged $42?"),
           ("technical", 0, "The export button does nothing."),
           ("account", 0, "Can I add a second user to my plan?")]

TICKET_SCHEMA = {"type": "object",
                 "properties": {"category": {"type": "string",
                                             "enum": ["billing", "technical", "account"]},
                                "amount": {"type": "number"}},
                 "required": ["category", "amount"], "additionalProperties": False}


def ticket_task(folder: Path, schema: dict[str, Any] | None = None, rows: int = 12) -> Path:
    """The support-ticket task: answer schema {category: enum, amount: number}, both
    required, scored on `category` alone."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "tickets.jsonl"
    data.write_text("".join(json.dumps({"id": f"t{i}", "text": t, "category": c, "amount": a})
                            + "\n" for i, (c, a, t) in enumerate(TICKETS[:rows])),
                    encoding="utf-8")
    task = {"name": "tickets", "label": "category accuracy",
            "dataset": {"path": "tickets.jsonl", "id": {"kind": "path", "path": "id"},
                        "fields": {"text": "text"},
                        "gold": {"path": "category", "coerce": {"kind": "string"}}},
            "prompts": PROMPTS,
            "schemas": {"ticket": {"kind": "static", "schema": schema or TICKET_SCHEMA}},
            "answer_schema": "ticket",
            "extract": {"free": [{"kind": "regex", "pattern": "[Aa]nswer:[ \\t]*(\\w+)",
                                  "group": 1, "match": "last"}],
                        "json": {"path": "category"}},
            "coerce": {"kind": "string"},
            "check": {"kind": "string", "normalize": ["strip", "lower"]}}
    path = folder / "tickets.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


# (gold pattern, the schema's pattern for that item's answer)
PATTERNS = [("\\d{5}", "^[0-9]{5}$"), ("[A-Z]{3}-\\d{2}", "^[A-Z]{3}-[0-9]{2}$"),
            ("colou?r", "^[a-z]+$"), ("(cat|dog)s?", "^[a-z]{3,4}$"),
            ("\\d+\\.\\d\\d", "^[0-9.]+$"), ("[a-f0-9]{8}", "^[0-9a-f]{8}$"),
            ("yes|no", "^(yes|no)$"), ("v\\d+(\\.\\d+){2}", "^v")]


def regex_task(folder: Path) -> Path:
    """A regex checker whose gold is a pattern (fullmatch), over per-item schemas whose
    answer is a string with its own `pattern`."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"r{i}", "text": f"Give a string matching {gold}.", "gold": gold,
             "schema": {"type": "object",
                        "properties": {"answer": {"type": "string", "pattern": own}},
                        "required": ["answer"], "additionalProperties": False}}
            for i, (gold, own) in enumerate(PATTERNS)]
    (folder / "rx.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                     encoding="utf-8")
    task = {"name": "rx", "label": "pattern accuracy",
            "dataset": {"path": "rx.jsonl", "id": {"kind": "path", "path": "id"},
                        "fields": {"text": "text", "schema": "schema"},
                        "gold": {"path": "gold"}},
            "prompts": PROMPTS,
            "schemas": {"answer": {"kind": "per_item", "path": "schema"}},
            "answer_schema": "answer",
            "extract": {"free": [{"kind": "regex", "pattern": "Answer:[ \\t]*(\\S+)",
                                  "group": 1, "match": "last"}],
                        "json": {"path": "answer"}},
            "check": {"kind": "regex", "fullmatch": True}}
    path = folder / "rx.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return path


def write_replay(path: Path, task: str, arms: list[str],
                 texts: dict[str, dict[str, str]]) -> Path:
    """A replay as the format defines it (vbw/formats/replay.schema.json): header, then
    one record per item with each arm's text."""
    lines = [{"meta": {"format": "vbw-replay/1", "task": task, "arms": arms}}]
    lines += [{"id": i, "arms": {a: {"text": t[a]} for a in arms}} for i, t in texts.items()]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path
