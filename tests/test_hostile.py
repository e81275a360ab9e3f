"""A hostile corpus run through the real `vbw` entry point: every malformed input is one
line, exit 2, fast; nothing is a traceback or exit 1 (the gate's code)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pytest
import yaml

from tests.conftest import REPLAYS, portable_task, run_vbw

SMOL_GSM8K = REPLAYS / "gsm8k/smollm2_135m/outlines.jsonl"
BOUND_S = 30  # generous for CI; each case takes about a second here


def _task_file(tmp: Path, mutate: Callable[[dict], None] | None = None,
               text: str | None = None) -> str:
    path = tmp / "t.yaml"
    if text is None:
        data = portable_task("gsm8k")
        if mutate is not None:
            mutate(data)
        text = yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return f"task.files=[{path}]"


def _bomb(levels: int = 9) -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


def _bfcl_file(tmp: Path, mutate: Callable[[dict], None]) -> str:
    data = portable_task("bfcl_simple")
    mutate(data)
    path = tmp / "b.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return f"task.files=[{path}]"


def _missing_data(d: dict) -> None:
    d["dataset"]["path"] = "/nonexistent/test.jsonl"


CASES: dict[str, tuple[Callable[[Path], list[str]], list[str]]] = {
    "override of an unknown key without +": (
        lambda t: ["task=gsm8k", "gate.wrong_valid_abve=0.2"],
        ["gate.wrong_valid_abve=0.2", "write gate.wrong_valid_above=0.2;"]),
    "negative seed": (lambda t: ["task=gsm8k", "bootstrap.seed=-1"], ["bootstrap.seed"]),
    "resamples 1e9": (lambda t: ["task=gsm8k", "bootstrap.resamples=1e9"],
                      ["bootstrap.resamples", "1000000"]),
    "run dir under /proc": (lambda t: ["task=gsm8k", "hydra.run.dir=/proc/vbw/x"],
                            ["hydra.run.dir", "/proc"]),
    "run dir through a file": (
        lambda t: (t / "f").write_text("x") and ["task=gsm8k", f"hydra.run.dir={t}/f/out"],
        ["is a file, not a folder"]),
    "alias bomb in a task file": (lambda t: [_task_file(t, text=_bomb())],
                                  ["t.yaml", "alias"]),
    "deeply nested task file": (lambda t: [_task_file(t, text="a: " + "[" * 5000 + "]" * 5000)],
                                ["t.yaml", "nested deeper"]),
    "duplicate key in a task file": (
        lambda t: [_task_file(t, text="name: a\nname: b\n")],
        ["t.yaml:2: duplicate key 'name'"]),
    "schema with an unknown type": (
        lambda t: [_task_file(t, lambda d: d["schemas"]["answer"]["schema"].__setitem__(
            "type", "integerr"))], ["schemas.answer", "integerr"]),
    "schema with required: 5": (
        lambda t: [_task_file(t, lambda d: d["schemas"]["answer"]["schema"].__setitem__(
            "required", 5))], ["schemas.answer", "not a valid JSON Schema"]),
    "missing dataset with a v1 replay": (
        lambda t: [_task_file(t, _missing_data), f"replay={SMOL_GSM8K}"],
        ["dataset file not found: /nonexistent/test.jsonl"]),
    "dataset that is a folder": (
        lambda t: [_task_file(t, lambda d: d["dataset"].__setitem__("path", str(t))),
                   f"replay={SMOL_GSM8K}"], ["is a folder, not a file"]),
    "replay holding only its header": (
        lambda t: (t / "h.jsonl").write_text(SMOL_GSM8K.read_text().splitlines()[0] + "\n")
        and ["task=gsm8k", f"replay={t / 'h.jsonl'}"], ["no item of task gsm8k"]),
    "per-item schema path that yields nothing": (
        lambda t: [_bfcl_file(t, lambda d: d["schemas"]["arguments"].__setitem__(
            "path", "function.parametres"))],
        ["schemas.arguments", "simple_0", "'function.parametres' gave nothing",
         "question, function, name"]),
    "membership normaliser as a bare list": (
        lambda t: [_task_file(t, lambda d: d.__setitem__(
            "check", {"kind": "membership", "string": ["strip", "lower"]}))],
        ["check.membership.string", "expected a string normaliser like {normalize:"]),
    "regex group beyond the pattern's groups": (
        lambda t: [_task_file(t, lambda d: d["extract"]["free"][0].__setitem__("group", 2))],
        ["extract.free.0.regex", "group 2 does not exist", "has 1 group(s)"]),
    "prompt template of 10**9 characters": (
        lambda t: [_task_file(t, lambda d: d["prompts"].__setitem__(
            "free", "{{ 'a' * 10**9 }}"))],
        ["t.yaml: prompts.free: item gsm8k_test_0", "exceed 2,000,000 characters"]),
    "prompt template looping without output": (
        lambda t: [_task_file(t, lambda d: d["prompts"].__setitem__(
            "json", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                    "{% endfor %}{{ schema | json }}"))],
        ["t.yaml: prompts.json: item gsm8k_test_0", "rendering took over 5 s"]),
    "prompt template recursing": (
        lambda t: [_task_file(t, lambda d: d["prompts"].__setitem__(
            "free", "{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}"))],
        ["t.yaml: prompts.free: item gsm8k_test_0", "recursion"]),
    **{f"task regex with {name}": (
        lambda t, p=pattern: [_task_file(t, lambda d: d["extract"]["free"][0].__setitem__(
            "pattern", p))], ["t.yaml", "extract.free.0.regex.pattern", construct])
       for name, pattern, construct in [
           ("a backreference", r"(\d+)=\1", "backreference \\1"),
           ("a lookahead", r"Answer:(?=\s)\s*(\d+)", "lookahead (?=...)"),
           ("a possessive quantifier", r"Answer:\s*+(\d+)", "possessive quantifier *+"),
           ("an atomic group", r"Answer:(?>\s*)(\d+)", "atomic group (?>...)")]},
    "schema pattern with a lookbehind": (
        lambda t: [_task_file(t, lambda d: d["schemas"]["reasoning"]["schema"]["properties"][
            "reasoning"].__setitem__("pattern", r"(?<=x)y"))],
        ["t.yaml", "schemas.reasoning", "properties/reasoning", "lookbehind (?<=...)"]),
    "replay that is not JSON": (
        lambda t: (t / "x.jsonl").write_text("{not json\n")
        and ["task=gsm8k", f"replay={t / 'x.jsonl'}"], ["x.jsonl:1", "not valid JSON"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    make, expect = CASES[case]
    args = make(tmp_path)
    start = time.perf_counter()
    proc = run_vbw(*args, "mode=replay", f"hydra.run.dir={tmp_path}/out"
                   if not any(a.startswith("hydra.run.dir") for a in args) else "n=5",
                   cwd=tmp_path, timeout=BOUND_S * 2)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for text in expect:
        assert text in lines[0], (text, lines[0])
    assert elapsed < BOUND_S
