"""Differential tests: the linear-time rewrites answer exactly as the original code did
(the GSM8K regex, the first JSON object, the python_call span), on many generated strings
small enough for the originals to be fast, plus the depth rule the original left to the
recursion limit."""

from __future__ import annotations

import json
import random
import re
import sys
from typing import Any

import pytest

from tests.conftest import TASK_CONF
from vbw.task.extract import call_source
from vbw.task.jsontext import scan as jsonscan
from vbw.task.jsontext.scan import MAX_DEPTH, _Search, first_json_object
from vbw.task.jsontext.values import decode_at
from vbw.task.regex import compile_task_regex
from vbw.task.runner import load_task

OLD_GSM8K = r"[Aa]nswer\s*[:=]\s*\**\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)"
_DECODER = json.JSONDecoder()

GSM8K_PIECES = ["Answer", "answer", "ANSWER", "Answer:", "answer=", ":", "=", " ", "  ", "\n",
                "\t", "*", "**", "$", "-", "1", "23", ",", ".", "5", "x", "\u00a0", "\u0663", "A"]


def test_gsm8k_pattern_matches_exactly_what_the_original_matched() -> None:
    """The bundled pattern on RE2 against the spec's on Python's re: first and last match.
    RE2's \\d and \\s are ASCII (README, Regexes): here they are Python's re.ASCII ones,
    which the Arabic-Indic digit and no-break space pieces tell apart from Unicode's."""
    new = compile_task_regex(load_task(TASK_CONF / "gsm8k.yaml").spec.extract.free[0].pattern)
    old = re.compile(OLD_GSM8K, re.ASCII)
    examples = ["so the answer is\nAnswer: 1,234", "Answer: 3\n... final Answer = $ 7",
                "Answer: **18**", "answer: -3", "Answer: * * 5", "Answer:$*5", "Answer: $-.5"]
    rng = random.Random(8)
    texts = examples + ["".join(rng.choice(GSM8K_PIECES) for _ in range(rng.randint(0, 25)))
                        for _ in range(20_000)]
    for text in texts:
        matches = [[m.span(), m.span(1)] for m in old.finditer(text)]
        assert new.search(text) == (matches[0] if matches else None), text
        assert new.last(text) == (matches[-1] if matches else None), text


def _old_first_json_object(text: str) -> Any:
    """The implementation this replaced: a decode at each `{`, quadratic on hostile text."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


JSON_PIECES = ["{", "}", "[", "]", '"', "\\", ":", ",", " ", "\n", "\t", "\r", "a", "1", "-", "0",
               ".", "e", "+", "true", "false", "null", "NaN", "Infinity", "-Infinity", "\\u00e9",
               "\\ud800", '\\"', "\x01", '{"a":', '"b"', "{}", "[]", '{"a": 1}', '"{"', '"}"',
               '"{}"', '{"', '":', "1.5", "01", "1e5", "1e", "é", "tru", "\\n", "\\u12", "\\/"]


def _json_like(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(["1", '"s"', "true", "null", "-2.5e3", '"{"', '"}"', '"\\""', "{}", "[]"])
    items = [_json_like(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if r < 0.65:
        return "{" + ", ".join(f'"{rng.choice("ab{}")}": {v}' for v in items) + "}"
    return "[" + ",".join(items) + "]"


def _nested(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 5)):
        unit = rng.choice(['{"a":', "[", '{"b":[', '{ "{" : ', '["{",', '{"a":{}, "b":'])
        middle = rng.choice(["1", "{}", "[]", '"x"', '{"c":[1]}', ""])
        parts.append(unit * rng.randint(0, 8) + middle
                     + rng.choice(["}", "]", "]}", "}]", ""]) * rng.randint(0, 8))
    return "".join(parts)


def _mutate(rng: random.Random, s: str) -> str:
    chars = list(s)
    for _ in range(rng.randint(0, 3)):
        i = rng.randint(0, len(chars))
        op = rng.random()
        if op < 0.4 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(i, rng.choice(JSON_PIECES))
        else:
            chars = chars[:i]
    return "".join(chars)


def _json_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)

    def noise() -> str:
        return "".join(rng.choice(JSON_PIECES) for _ in range(rng.randint(0, 12)))

    makers = [noise, lambda: _mutate(rng, noise() + _json_like(rng) + noise()),
              lambda: _mutate(rng, _json_like(rng)) + _mutate(rng, _json_like(rng)),
              lambda: _mutate(rng, _nested(rng))]
    return [rng.choice(makers)() for _ in range(n)]


@pytest.fixture(params=["tries then search", "search only"])
def tries(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways to an answer: the literal tries (jsonscan._tries) that decide most texts,
    and, with none, the search alone on every text."""
    if request.param == "search only":
        monkeypatch.setattr(jsonscan, "TRIES", 0)


def test_first_json_object_answers_as_the_original_did(tries: None) -> None:
    found = 0
    for text in _json_texts(1, 20_000):
        expected = _old_first_json_object(text)
        found += expected is not None
        assert repr(first_json_object(text)) == repr(expected), text
    assert found > 5_000  # the generator reaches both outcomes


class _Pairs(list):
    """An object decoded as its member list, so duplicate keys still count for depth."""


def _depth(v: Any) -> int:
    """How deep containers nest in a decoded value (an empty one counts 1)."""
    deepest, todo = 0, [(v, 1)]
    while todo:
        x, d = todo.pop()
        if isinstance(x, list):  # a _Pairs is a list of (key, value)
            deepest = max(deepest, d)
            todo.extend((y[1] if isinstance(x, _Pairs) else y, d + 1) for y in x)
    return deepest


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 6])
def test_depth_limit_is_the_first_object_within_it(limit: int) -> None:
    """With a small limit: the first `{` whose object decodes and is nested at most `limit`
    deep, exactly (the same rule MAX_DEPTH applies)."""
    decoder = json.JSONDecoder(object_pairs_hook=_Pairs)
    for text in _json_texts(2, 4_000):
        expected = None
        for m in re.finditer(r"\{", text):
            try:
                value, _ = decoder.raw_decode(text, m.start())
            except ValueError:
                continue
            if isinstance(value, _Pairs) and _depth(value) <= limit:
                expected = m.start()
                break
        got = _Search(text, limit).run() if "{" in text else None
        assert got == expected, text


@pytest.mark.parametrize("shape", [
    ('{"a":', "1", "}"), ('{"a":[', "1", "]}"), ("[{\"b\":", "{}", "}]"),
    ('{"k":{"a":{}, "b":', '"x"', "}"), ('{"{":', "[]", "}"),
])
@pytest.mark.parametrize("levels", [MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 40])
def test_depth_limit_at_max_depth(shape: tuple[str, str, str], levels: int) -> None:
    """Around MAX_DEPTH itself (runs of openers, dropped frames): the first `{` whose
    object decodes within MAX_DEPTH, as Python's decoder plus the depth rule says."""
    head, middle, tail = shape
    text = "x" + head * levels + middle + tail * levels + "{}"
    decoder = json.JSONDecoder(object_pairs_hook=_Pairs)
    expected = None
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 4 * levels)  # for the reference decoder only
    try:
        for m in re.finditer(r"\{", text):
            try:
                value, _ = decoder.raw_decode(text, m.start())
            except ValueError:
                continue
            if isinstance(value, _Pairs) and _depth(value) <= MAX_DEPTH:
                expected = m.start()
                break
    finally:
        sys.setrecursionlimit(limit)
    assert expected is not None and _Search(text, MAX_DEPTH).run() == expected


CALL_PIECES = ["f", "calc", "a.b", "_", "x1", "é", " ", "\n", "\t", "(", ")", "((", "))", ",", "=",
               "1", "'s'", ".", "[", "]"]


def test_python_call_span_is_what_the_original_regex_matched() -> None:
    old = re.compile(r"[\w.]+\s*\(.*\)")
    rng = random.Random(3)
    for _ in range(20_000):
        text = "".join(rng.choice(CALL_PIECES) for _ in range(rng.randint(0, 20)))
        m = old.search(text.replace("\n", " "))
        assert call_source(text) == (m.group(0) if m else None), text


ARRAY_PIECES = ["[", "[", "[", "]", "]", ",", " ", "1", "-2.5", '"s"', "{}", '{"a":1}', "{",
                "}", '"b":', "x", "\n", "null", "[[[1", "[]", '{"c":[[[',
                '{"c":[[[1]]]}', '[[[{"d":[[[2]]]}]]]', '{"e":{"f":{"g":[]}}}']


def _array_runs(seed: int, n: int) -> list[str]:
    """Object members whose values open runs of arrays three and more deep, valid or not:
    the shape the scanner's cheap pre-filter decides without a full parse."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        body = "".join(rng.choice(ARRAY_PIECES) for _ in range(rng.randint(1, 14)))
        lead = rng.choice(['{"k":', '{"a": 1, "k":', '{ "k" : ', 'x{"k":', '{"k":[[', ''])
        tail = "".join(rng.choice(["]", "}", ",", " ", "x"]) for _ in range(rng.randint(0, 6)))
        out.append(lead + body + tail)
    return out


def test_first_json_object_on_deep_array_members_answers_as_the_original_did(
        tries: None) -> None:
    found = 0
    for text in _array_runs(2, 30_000):
        expected = _old_first_json_object(text)
        found += expected is not None
        assert repr(first_json_object(text)) == repr(expected), text
    assert found > 1_000


WHOLE = ['{"a": 1}', ' {"a": 1.5e300}', '{"a": 1e400}', '{"a": NaN}', '{"a": -Infinity}',
         '{"a": 1, "a": 2, "b": 3}', '{"a": "\\ud800"}', '{"a": 18446744073709551616}',
         '{"a": ' + "9" * 5000 + '}', '{"a": 0.1000000000000000055511151231257827}',
         '{"a": 2.2250738585072011e-308}', '{"a": 1} trailing', 'x {"a": [1, {"b": {}}]}\n',
         '{"a": "\\u00e9\\n"}', '{"a": 1}{"b": 2}', '[{"a": 1}]', '{"a": 1', '{"a":\t1 }\r\n',
         '{"a": ' * (MAX_DEPTH - 1) + '1' + '}' * (MAX_DEPTH - 1),
         '{"a": ' * (MAX_DEPTH + 1) + '1' + '}' * (MAX_DEPTH + 1),
         '{"a": [' * 300 + ']}' * 300]


@pytest.mark.parametrize("text", WHOLE, ids=range(len(WHOLE)))
def test_the_whole_object_shortcut_answers_as_the_search(text: str) -> None:
    """A text that is one JSON object from its first `{` is decoded by orjson; the answer
    (value, key order, type of every number) is the search's."""
    start = _Search(text, MAX_DEPTH).run()
    expected = None if start is None else decode_at(text, start)
    expected = expected if isinstance(expected, dict) else None
    got = first_json_object(text)
    assert repr(got) == repr(expected) and _types(got) == _types(expected)


def _types(v: Any) -> list[str]:
    """Every value's type, depth first (repr shows 1 and 1.0 apart, but not JsonBigInt)."""
    out, stack = [], [v]
    while stack:
        x = stack.pop()
        out.append(type(x).__name__)
        stack.extend(x.values() if isinstance(x, dict) else x if isinstance(x, list) else [])
    return out


def test_first_json_span_is_the_same_with_and_without_the_tries(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """report.html's span of the first object: the literal tries find the search's."""
    texts = _json_texts(3, 5_000) + _array_runs(4, 5_000)
    fast = [jsonscan.first_json_span(t) for t in texts]
    monkeypatch.setattr(jsonscan, "TRIES", 0)
    assert fast == [jsonscan.first_json_span(t) for t in texts]
    assert sum(s is not None for s in fast) > 1_000


PLAIN_CASES = WHOLE + ['{"a": 9223372036854775807}', '{"a": 9223372036854775808}',
                       '{"a": -9223372036854775808}', '{"a": [-9223372036854775809]}',
                       '{"a": 18446744073709551615}', '{"a": {"b": [1, 2.5, true, null]}}',
                       '{"a": 9.2e18}', '{"a": -9.3e18}']


@pytest.mark.parametrize("text", PLAIN_CASES, ids=range(len(PLAIN_CASES)))
def test_what_the_shortcut_says_of_plainness_is_validitys_plain(text: str) -> None:
    """first_json_object_plain's flag, where it gives one, is vbw.task.validity.plain of
    the object (which the validity check then does not walk again); the object is
    first_json_object's."""
    from vbw.task.jsontext.scan import first_json_object_plain
    from vbw.task.validity import plain

    obj, known = first_json_object_plain(text)
    assert repr(obj) == repr(first_json_object(text))
    if known is not None:
        assert obj is not None and known == plain(obj), text
