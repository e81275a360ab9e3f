"""Writes tickets.jsonl beside this file: 60 synthetic customer-support tickets.

Deterministic (a seeded random.Random, no other input): running it again rewrites the same
bytes. Each row is {"id", "text", "category", "amount", "urgent"}: the category is one of
five, the amount is the one money amount the ticket mentions (0 when it mentions none) and
urgent says whether the writer asks for haste. Run: python tasks/data/ticket/make_tickets.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 32
PER_CATEGORY = 12
OUT = Path(__file__).with_name("tickets.jsonl")

# {amt} is the money amount as written ("$49.99", "120 dollars"); templates without it
# give tickets with no amount. {item} and {when} vary the wording.
TEMPLATES: dict[str, list[str]] = {
    "billing": [
        "I was charged {amt} on my card this month but my plan should cost less. Can you check my invoice?",
        "My latest bill shows a charge of {amt} that I do not recognise. Please explain what it is for.",
        "Why was I billed twice {when}? The second charge was {amt}.",
        "The invoice you sent {when} has the wrong company name on it. Could you send a corrected one?",
        "I switched to the yearly plan but my statement still shows the monthly price. Please fix the billing.",
    ],
    "refund": [
        "I returned the {item} {when} and I am still waiting for my refund of {amt}.",
        "Please refund the {amt} I paid for the {item}; it arrived broken.",
        "I cancelled my order {when}. When will I get my money back? It was {amt}.",
        "I would like a refund for the {item}. It does not work as described.",
        "You promised a refund {when} but nothing has reached my account yet.",
    ],
    "shipping": [
        "My {item} has not arrived yet. I ordered it {when}. Where is it?",
        "The tracking page for my {item} has not changed {when}. Is the parcel lost?",
        "I paid {amt} for express delivery of my {item} but it is still not here.",
        "The courier left my {item} at the wrong address. It cost me {amt}; can you send it again?",
        "Can I change the delivery address for the {item} I ordered {when}?",
    ],
    "technical": [
        "The app crashes every time I open the settings page. I have reinstalled it twice.",
        "I cannot connect my {item} to the wifi since the update {when}.",
        "After paying {amt} for the premium version the export button still does nothing.",
        "The {item} shows error code E42 and then turns itself off.",
        "Your website gives me a blank page when I try to check out a basket of {amt}.",
    ],
    "account": [
        "I forgot my password and the reset email never arrives. Please help me log in.",
        "Please delete my account and all the data you hold about me.",
        "Someone changed the email on my account {when}. I did not do that.",
        "I want to merge my two accounts; one of them has a gift balance of {amt}.",
        "How do I change the name shown on my profile?",
    ],
}
ITEMS = ["headphones", "coffee maker", "phone case", "desk lamp", "router", "smart watch",
         "blender", "keyboard", "backpack", "printer"]
WHENS = ["last week", "three days ago", "yesterday", "on Monday", "two weeks ago", "this morning"]
URGENT = ["This is urgent, please reply today!", "URGENT: I need this fixed right now.",
          "Please treat this as an emergency, I need an answer immediately.",
          "I need this sorted out as soon as possible, it is very urgent."]
CALM = ["No rush, whenever you have a moment.", "Thanks in advance.",
        "Kind regards.", "Thank you for your help."]


def money(rng: random.Random) -> tuple[str, float | int]:
    """One amount as a ticket writes it, and its value: with cents or whole, $ or words."""
    if rng.random() < 0.5:
        value: float | int = round(rng.randint(5, 499) + rng.randint(1, 99) / 100, 2)
        return rng.choice([f"${value:.2f}", f"{value:.2f} dollars", f"USD {value:.2f}"]), value
    value = rng.randint(5, 900)
    return rng.choice([f"${value}", f"{value} dollars", f"${value}.00"]), value


def ticket(rng: random.Random, category: str, template: str, urgent: bool) -> dict:
    """One row: the template filled in, with an urgent or a calm closing line."""
    text_amt, amount = money(rng) if "{amt}" in template else ("", 0)
    body = template.format(amt=text_amt, item=rng.choice(ITEMS), when=rng.choice(WHENS))
    closing = rng.choice(URGENT if urgent else CALM)
    return {"text": f"{body} {closing}", "category": category, "amount": amount, "urgent": urgent}


def tickets(seed: int = SEED) -> list[dict]:
    """All rows, categories interleaved by a seeded shuffle, ids in file order."""
    rng = random.Random(seed)
    rows = []
    for category, templates in TEMPLATES.items():
        for i in range(PER_CATEGORY):
            rows.append(ticket(rng, category, templates[i % len(templates)], rng.random() < 0.4))
    rng.shuffle(rows)
    return [{"id": f"ticket_{i:03d}", **row} for i, row in enumerate(rows, start=1)]


def main() -> None:
    """Rewrite tickets.jsonl."""
    lines = [json.dumps(row, ensure_ascii=False) for row in tickets()]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
