"""The JSON grammar's two spellings (possessive from Python 3.11, greedy before): on 3.11+
both match exactly what the possessive originals (vbw up to 0.2.0) matched, at every
position of many generated texts; and each stays linear on hostile text."""

from __future__ import annotations

import re
import sys
import time
from typing import Any

import pytest

from tests.task.test_differential import _json_texts, _old_first_json_object
from tests.task.test_hostile import JSON_TEXT
from vbw.task.jsontext import grammar as g
from vbw.task.jsontext.scan import first_json_object

MB = 1 << 20


def _possessive() -> dict[str, Any]:
    """The original possessive patterns (Python 3.11+ syntax), by name as in jsongrammar."""
    ws = r"[ \t\n\r]*+"
    string = r'"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+"'
    num = r"-?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][-+]?+[0-9]++)?+"
    scalar = rf"(?:{string}|{num}|true|false|null|NaN|Infinity|-Infinity)"
    key = rf"{string}{ws}:{ws}"

    def opener(tag: str = "") -> str:
        return rf"(?P<o{tag}>\{{)|(?P<a{tag}>\[(?:{ws}\[)*+)"

    def flat(levels: int) -> str:
        value = scalar
        for _ in range(levels):
            arr = rf"\[{ws}(?:{value}(?:{ws},{ws}{value})*+{ws})?\]"
            obj = rf"\{{{ws}(?:{key}{value}(?:{ws},{ws}{key}{value})*+{ws})?\}}"
            value = rf"(?:{scalar}|{arr}|{obj})"
        return value

    def steps(value: str) -> list[re.Pattern[str]]:
        def obj_rest(tag: str) -> str:
            return (rf"(?:{ws},{ws}{key}{value})*+{ws}"
                    rf"(?:(?P<c{tag}>\}})|,{ws}{key}(?:{opener(tag)}))")

        def arr_rest(tag: str) -> str:
            return rf"(?:{ws},{ws}{value})*+{ws}(?:(?P<c{tag}>\])|,{ws}(?:{opener(tag)}))"

        return [re.compile(rf"{ws}(?:(?P<c>\}})|{key}(?:{value}{obj_rest('_')}|{opener()}))"),
                re.compile(obj_rest("")),
                re.compile(rf"{ws}(?:(?P<c>\])|{value}{arr_rest('_')}|{opener()})"),
                re.compile(arr_rest(""))]

    flat2 = flat(g.FLAT_LEVELS)
    deep = rf"(?:\{{|\[(?:{ws}\[)*+{ws}(?:\]|\{{|{flat2}{ws}[,\]]))"
    old = {f"SHALLOW_STEPS[{i}]": p for i, p in enumerate(steps(flat2))}
    old |= {f"DEEP_STEPS[{i}]": p for i, p in enumerate(steps(scalar))}
    old["OPENER"] = re.compile(rf"(?:(?<=\{{){ws}(?P<k>{string}){ws}:{ws}|(?<=\[){ws})"
                               rf"(?=[\[{{])(?P<a>\[(?:{ws}\[)*+)?+(?:{ws}(?P<o>\{{))?+")
    old["CANDIDATE"] = re.compile(rf'\{{{ws}["}}]')
    old["PLAUSIBLE"] = re.compile(rf"\{{{ws}(?:\}}|{key}(?:{flat2}(?:{ws},{ws}{key}{flat2})*+"
                                  rf"{ws}(?:\}}|,{ws}{key}{deep})|(?!{flat2}){deep}))")
    old["EMPTY_OBJECT"] = re.compile(rf"\{{{ws}\}}")
    return old


def _named(grammar: g.Grammar) -> dict[str, re.Pattern[str]]:
    """A grammar's regexes by the names jsongrammar exports them under."""
    new = {f"SHALLOW_STEPS[{i}]": p for i, p in enumerate(grammar.shallow_steps)}
    new |= {f"DEEP_STEPS[{i}]": p for i, p in enumerate(grammar.deep_steps)}
    return new | {name: getattr(grammar, name.lower())
                  for name in ("OPENER", "CANDIDATE", "PLAUSIBLE", "EMPTY_OBJECT")}


def _seen(m: re.Match[str] | None) -> Any:
    """What the scanner reads off a match: its span, last group, and every named group's
    span, the atomic emulation's own group r aside (as last group: no group, which a step
    can never end with, as the originals tell)."""
    if m is None:
        return None
    names = [n for n in m.re.groupindex if n != "r"]
    return m.span(), None if m.lastgroup == "r" else m.lastgroup, {n: m.span(n) for n in names}


SPELLINGS = [False, True] if sys.version_info >= (3, 11) else [False]


def test_the_module_exports_the_spelling_of_this_python() -> None:
    """Possessive exactly where Python's re has it; the scanner's names are that grammar's."""
    assert g.POSSESSIVE == (sys.version_info >= (3, 11))
    exported = {**{f"SHALLOW_STEPS[{i}]": p for i, p in enumerate(g.SHALLOW_STEPS)},
                **{f"DEEP_STEPS[{i}]": p for i, p in enumerate(g.DEEP_STEPS)},
                "OPENER": g.OPENER, "CANDIDATE": g.CANDIDATE, "PLAUSIBLE": g.PLAUSIBLE,
                "EMPTY_OBJECT": g.EMPTY_OBJECT}
    built = _named(g.grammar(g.POSSESSIVE))
    assert {k: p.pattern for k, p in exported.items()} == {k: p.pattern for k, p in built.items()}
    assert ("*+" in g.PLAUSIBLE.pattern) == g.POSSESSIVE


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the originals are Python 3.11+ syntax")
@pytest.mark.parametrize("possessive", [False, True])
def test_each_spelling_matches_what_the_possessive_originals_matched(possessive: bool) -> None:
    old, new = _possessive(), _named(g.grammar(possessive))
    assert old.keys() == new.keys()
    texts = _json_texts(5, 3_000) + ['{"a":1,"k":{"b":1},"k":{} x', '[1,[2],{"a":[3]} x',
                                     '{"a":"x\\"y\\u00e9\\n" , "b" : -0.5e+3 }',
                                     '{"a":[[[1]], [[2]]], "b": {"c": {"d": 1}}}']
    matched = 0
    for text in texts:
        for pos in range(len(text) + 1):
            for name, pattern in new.items():
                want = _seen(old[name].match(text, pos))
                assert _seen(pattern.match(text, pos)) == want, (name, text, pos)
                matched += want is not None
    assert matched > 50_000  # the texts reach matches of every kind, not only failures


HOSTILE = {  # a regex (by name) and a position in 1 MB of text where it reads it all
    "members then garbage": ("SHALLOW_STEPS[1]", ',"k":{"b":1}' * (MB // 12) + " x", 0),
    "flat containers then garbage": ("SHALLOW_STEPS[3]", ",[1],{}" * (MB // 7) + " x", 0),
    "an unclosed string of escapes": ("SHALLOW_STEPS[0]", '"a":"' + "\\n" * (MB // 2), 0),
    "an unclosed plain string": ("SHALLOW_STEPS[2]", '"' + "a" * MB, 0),
    "digits then garbage": ("SHALLOW_STEPS[2]", "1" * MB + "x", 0),
    "spaces then garbage": ("SHALLOW_STEPS[1]", " " * MB + "x", 0),
    "a run of [ then garbage": ("OPENER", "[" + " [" * (MB // 2) + " x", 1),
    "plausible members then garbage": ("PLAUSIBLE", '{"a":1' + ',"k":{"b":1}' * (MB // 12) + "x",
                                       0),
    "plausible arrays then garbage": ("PLAUSIBLE", '{"a":' + "[" * MB + "1 x", 0),
}


@pytest.mark.parametrize("possessive", SPELLINGS)
@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_regex_is_linear_on_hostile_text(name: str, possessive: bool) -> None:
    """1 MB read then refused (or matched up to the garbage) within seconds: a backtracking
    blow-up would take minutes, a quadratic one hours. (The greedy spelling gives runs back
    one character at a time, so it is slower by a constant: up to ~1 s here, alone.)"""
    key, text, pos = HOSTILE[name]
    pattern = _named(g.grammar(possessive))[key]
    t = time.perf_counter()
    m = pattern.match(text, pos)
    took = time.perf_counter() - t
    assert took < (3.0 if possessive else 10.0), f"took {took:.2f} s"
    assert m is None or m.end() < len(text) - 1  # the garbage is never part of a match


@pytest.fixture
def greedy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner (vbw.task.jsontext.scan) on the greedy spelling, whatever this Python is."""
    spelled = g.grammar(possessive=False)
    for field, value in spelled._asdict().items():
        monkeypatch.setattr(g, field.upper(), value)


def test_the_scanner_on_the_greedy_spelling_answers_as_the_original(greedy: None) -> None:
    found = 0
    for text in _json_texts(2, 4_000):
        expected = _old_first_json_object(text)
        found += expected is not None
        assert repr(first_json_object(text)) == repr(expected), text
    assert found > 1_000


@pytest.mark.parametrize("name", list(JSON_TEXT))
def test_the_scanner_on_the_greedy_spelling_is_linear(greedy: None, name: str) -> None:
    """The hostile texts of tests/task/test_hostile.py, 1 MB each, within the bound it sets
    for the greedy spelling (JSON_BOUND there): far below a quadratic scan of 1 MB."""
    text, expected = JSON_TEXT[name]
    t = time.perf_counter()
    assert first_json_object(text) == expected
    took = time.perf_counter() - t
    assert took < 15.0, f"took {took:.2f} s"
