"""Hostile templates and regexes (issue 30, items 5, 11 and 14): a task whose prompt
template or extraction regex is hostile, run in mode=check and scored against a bundled
replay (its texts scored against the edited task: allow_task_mismatch)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT, portable_task
from tests.hostile4 import Case

REPLAY = ROOT / "replays/gsm8k/smollm2_135m/outlines.jsonl"


def _task(folder: Path, edit: Any) -> Path:
    data = portable_task("gsm8k")
    edit(data)
    path = folder / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _template(source: str, mode: str, field: str = "free") -> Any:
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        path = _task(folder, lambda d: d["prompts"].__setitem__(field, source))
        return _args(folder, path, mode)
    return make


def _regex(step: dict, mode: str) -> Any:
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        path = _task(folder, lambda d: d["extract"].__setitem__(
            "free", [{"kind": "regex", **step}, *d["extract"]["free"]]))
        return _args(folder, path, mode)
    return make


def _args(folder: Path, path: Path, mode: str) -> list[str]:
    args = [f"task.files=[{path}]", f"hydra.run.dir={folder / 'out'}"]
    if mode == "check":
        return [*args, "mode=check"]
    return [*args, f"replay={REPLAY}", "allow_task_mismatch=true"]


TEMPLATES = {
    "indent by a string width": "{{ ((question ~ '\\n') * 1000)|indent('x' * 1000000) }}",
    "batch with a fill value": "{% for b in [1]|batch(10**9, 'x') %}{% endfor %}{{ question }}",
    "squaring in set": "{% set x = 10**30000 %}{% set x = x*x %}{% set x = x*x %}"
                       "{% set x = x*x %}{% set x = x*x %}{{ question }}",
    "format widths": "{{ ('%999999s' * 100)|format(*range(100)) }}",
    "percent widths": "{{ ('%999999s' * 3) % (1, 2, 3) }}",
    "translate": "{{ ('a' * 100000).translate({97: 'x' * 100000}) }}",
    "expandtabs": "{{ ('\\t' * 100000).expandtabs(1000000) }}",
    "list of references": "{% set s = question * 10000 %}{{ [s] * 1000 }}",
    "deep filter chain": "{{ question" + "|trim" * 3000 + " }}",
    "deep parentheses": "{{ " + "(" * 3000 + "question" + ")" * 3000 + " }}",
    "urlize": "{{ question|urlize(target='x' * 1000000) }}",
}

CASES = [Case("5 template bounds", f"{name} ({mode})", _template(source, mode),
              seconds=30, rss_mb=400)
         for name, source in TEMPLATES.items() for mode in ("check", "replay")]
CASES += [Case("5 template bounds", "json prompt, deep not (replay)",
               _template("{{ " + "not " * 5000 + "schema }}", "replay", "json"),
               seconds=30, rss_mb=400)]

_GROUPS = "(a)?" * 1000
CASES += [
    Case("11 capture groups", f"1,000 groups, match: last ({mode})",
         _regex({"pattern": _GROUPS, "group": 1, "match": "last"}, mode),
         seconds=30, rss_mb=400) for mode in ("check", "replay")]
CASES += [Case("11 capture groups", "100 groups, match: last, whole texts (replay)",
               _regex({"pattern": "(a)?" * 100, "group": 1, "match": "last",
                       "max_chars": None}, "replay"),
               rc=0, lines=0, seconds=60, rss_mb=600)]

REGEXES = {
    r"\C": r"(\d)\C", "a group named vbw_eol_0": r"(?P<vbw_eol_0>\d)$",
    "text after $": "(\\d+)$\n",
}
CASES += [Case("14 re2 translation", f"{name} ({mode})",
               _regex({"pattern": pattern, "group": 1}, mode), seconds=30, rss_mb=400)
          for name, pattern in REGEXES.items() for mode in ("check", "replay")]
