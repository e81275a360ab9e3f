"""Task regexes on RE2: the patterns users write score, the ones RE2 cannot run are refused in
one line naming the construct, Python's meaning is kept where the module says, hostile
patterns on hostile text stay within a time bound, and on every committed output the new
engine extracts exactly what Python's `re` did."""

from __future__ import annotations

import json
import re
import sys
import time
from collections import deque
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLE, REPLAYS, TASK_CONF, portable_task
from vbw.errors import ConfigError
from vbw.task.check import RegexChecker
from vbw.task.extract import RegexStep
from vbw.task.regex import compile_task_regex
from vbw.task.regex_syntax import translate
from vbw.task.runner import load_task

# The natural patterns, each with a text and what it must extract (group 1).
NATURAL = {
    r"Sentiment:\s*\**\s*(positive|negative|neutral)\b": ("Sentiment: **positive**", "positive"),
    r"Answer: *((?:\w+ ?)+)$": ("so.\nAnswer: New York City\n", "New York City"),
    r"\[\[(\d+\.?\d*)\]\]": ("Rating: [[7.5]]", "7.5"),
    r"(?i)answer\s*(?:is|:)?\s*\(?([A-E])\)?": ("The ANSWER is (c).", "c"),
    r"(\d+)\s*(?:units)?\s*$": ("We need 42 units  \n", "42"),
}


@pytest.mark.parametrize("pattern", list(NATURAL))
def test_natural_patterns_load_and_extract(pattern: str) -> None:
    text, expected = NATURAL[pattern]
    assert RegexStep(kind="regex", pattern=pattern, group=1).apply(text, {}) == expected
    assert RegexStep(kind="regex", pattern=pattern, group=1, match="first").apply(
        text, {}) == expected
    assert RegexChecker(kind="regex", pattern=pattern, fullmatch=False).check(text, None)


REFUSED = {  # pattern -> what the one-line refusal names, and what it says to write
    r"(\d+) and \1": ("backreference \\1", "match the repeated text explicitly"),
    r"(?P<n>\w+) (?P=n)": ("backreference (?P=name)", "match the repeated text"),
    r"Answer:(?=\s*\d)\s*(\d+)": ("lookahead (?=...)", "capture the part you need"),
    r"(?<!\d)\d+": ("negative lookbehind (?<!...)", "character class"),
    r"(?<=Answer: )\d+": ("lookbehind (?<=...)", "capture what follows"),
    r"Answer:\s*+(\d++)": ("possessive quantifier *+", "write *"),
    r"Answer:(?>\s*)(\d+)": ("atomic group (?>...)", "plain group (?:...)"),
    r"(?x) a b": ("verbose flag x", "remove it"),
    r"(?:a{1,100}){1,100}b": ("repeat count {1,100} is too large", "at most 1000"),
}


@pytest.mark.parametrize("pattern", list(REFUSED))
def test_refused_constructs_are_named_with_the_fix(pattern: str) -> None:
    construct, fix = REFUSED[pattern]
    for build in (lambda: RegexStep(kind="regex", pattern=pattern),
                  lambda: RegexChecker(kind="regex", pattern=pattern)):
        with pytest.raises(ValueError) as e:
            build()
        msg = str(e.value)
        assert construct in msg and fix in msg and "linear-time engine" in msg, msg


def test_refused_pattern_in_a_task_file_is_one_line_naming_file_and_field(
        tmp_path: Path) -> None:
    data = portable_task("gsm8k")
    data["extract"]["free"][0]["pattern"] = r"Answer:(?=\s*\d)\s*(\d+)"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError) as e:
        load_task(path)
    msg = str(e.value)
    assert "\n" not in msg and "t.yaml" in msg and "extract.free.0.regex.pattern" in msg
    assert "lookahead (?=...)" in msg, msg


def test_gold_pattern_refused_when_the_item_is_built() -> None:
    check = RegexChecker(kind="regex")
    assert check.gold_problem("a.*") is None
    problem = check.gold_problem(r"(a)\1")
    assert problem is not None and "backreference \\1" in problem
    assert not check.check("aa", r"(a)\1")  # never raises, never matches


# -- Python's meaning, kept or documented ---------------------------------------------------
@pytest.mark.parametrize("pattern,text,expected", [
    (r"(\d+)$", "x 12\n", "12"),             # $ before a final newline, as in Python
    (r"(\d+)$", "x 12\n\n", None),           # but only one
    (r"(\d+$)", "x 12\n", "12"),            # and takes no newline into a group
    (r"(\d+\s*$)", "x 12 \n", "12 \n"),     # unless the pattern does
    (r"(?m)(\d+)$", "1\n2\nz", "2"),         # (?m): before every newline
    (r"(?m:(\d+)$)", "1\n2\nz", "2"),        # scoped too
    (r"(\d+)\Z", "x 12\n", None),            # \Z is the very end, as in Python
    (r"(a{,2})b", "aaab", "aa"),             # {,n} is {0,n}, as in Python (RE2: literal)
    (r"(\u00e9+)", "caf\u00e9\u00e9", "\u00e9\u00e9"),
    (r"(\N{EM DASH})", "a\u2014b", "\u2014"),
    (r"x(?#note)(y)", "xy", "y"),
    (r"([$]\d)", "cost $5", "$5"),           # $ in a class is a dollar
    (r"(\Q$(x)\E)", "a $(x) b", "$(x)"),      # and in RE2's quoted text
    (r"(\d+)", "\u0663\u0664 and 12", "12"),  # \d is ASCII (\p{Nd} for any digit)
    (r"(\p{Nd}+)", "\u0663\u0664", "\u0663\u0664"),
    (r"(?i)(stra\u00dfe)", "STRA\u00dfE", "STRA\u00dfE"),
])
def test_python_meaning_where_kept(pattern: str, text: str, expected: str | None) -> None:
    assert RegexStep(kind="regex", pattern=pattern, group=1).apply(text, {}) == expected


def test_flags_and_multiline_scoping_translate() -> None:
    assert translate("a$", ["MULTILINE"]) == "(?m)a$"
    assert translate("(?m:a$)b$") == r"(?m:a$)b(?:(?P<vbw_eol_0>\n)?\z)"
    assert translate("a$", ["IGNORECASE", "DOTALL"]) == r"(?is)a(?:(?P<vbw_eol_0>\n)?\z)"
    check = RegexChecker(kind="regex", pattern=r"\d+$")
    assert check.check("12", None) and not check.check("12\n", None)  # as re.fullmatch


def test_lone_surrogates_and_spans_stay_on_the_original_text() -> None:
    text = "\ud800 Answer: 5 \udfff"
    step = RegexStep(kind="regex", pattern=r"Answer: (\d)", group=1)
    assert step.apply(text, {}) == "5" and step.span(text) == (10, 11)


# -- hostile patterns on hostile text -------------------------------------------------------
EXPONENTIAL = [r"(a|aa)*b", r"(a+|b)+c", r"(?:\w+|,)+!", r"(a|a?)+b", r"Answer: ((?:a|a?)+)c",
               r"(?:a{1,30}){1,30}b", r"(?:\d+|,)+%"]
QUADRATIC = [r"(\d+)\s*%", r"(\d+)\s*(?:units)?\s*$"]
HOSTILE_TEXT = {r"(?:\d+|,)+%": "1" * 5000, r"Answer: ((?:a|a?)+)c": "Answer: " + "a" * 4992}


def _timed(fn, bound: float):
    t = time.perf_counter()
    out = fn()
    assert time.perf_counter() - t < bound, f"took {time.perf_counter() - t:.2f} s"
    return out


@pytest.mark.parametrize("pattern", EXPONENTIAL)
@pytest.mark.parametrize("match", ["first", "last"])
def test_exponential_patterns_on_5000_characters(pattern: str, match: str) -> None:
    text = HOSTILE_TEXT.get(pattern, "a" * 5000)
    step = RegexStep(kind="regex", pattern=pattern, group=0, match=match, max_chars=None)
    assert _timed(lambda: step.apply(text, {}), 1.0) is None
    check = RegexChecker(kind="regex", pattern=pattern, max_chars=None)
    assert _timed(lambda: check.check(text, None), 1.0) is False


@pytest.mark.parametrize("pattern", QUADRATIC)
@pytest.mark.parametrize("match", ["first", "last"])
def test_quadratic_patterns_on_100000_digits(pattern: str, match: str) -> None:
    step = RegexStep(kind="regex", pattern=pattern, group=1, match=match, max_chars=None)
    text = "1" * 100_000 + "x"
    assert _timed(lambda: step.apply(text, {}), 1.0) is None


# -- differential: every committed output, old engine against new ---------------------------
OLD_GSM8K = r"[Aa]nswer\s*+[:=]\s*+\**+\s*+\$?+\s*+(-?+\d[\d,]*+(?:\.\d++)?+)"
if sys.version_info < (3, 11):  # no possessive quantifiers: the spec's own pattern
    OLD_GSM8K = r"[Aa]nswer\s*[:=]\s*\**\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)"
# Patterns Python's re runs fast on natural text (the ones it cannot are above), with the
# flags a task may set; the bundled and example tasks' own patterns are added below.
CORPUS: list[tuple[str, tuple[str, ...]]] = [
    (r"Sentiment:\s*\**\s*(positive|negative|neutral)\b", ()),
    (r"\[\[(\d+\.?\d*)\]\]", ()), (r"(?i)answer\s*(?:is|:)?\s*\(?([A-E])\)?", ()),
    (r"(\d+)\s*(?:units)?\s*$", ()), (r"(\w+)$", ()), (r"(\w+)$", ("MULTILINE",)),
    (r"^(\w+)", ("MULTILINE",)), (r"(.+)$", ()), (r"(.*)", ("DOTALL",)),
    (r"\b(is|are)\b\s+(\w+)", ("IGNORECASE",)), (r"(\d+(?:\.\d+)?)\s*\Z", ()),
    (r"\*\*([^*]+)\*\*", ()), (r"=\s*(-?\d[\d,]*)", ()), (r"[Tt]he answer is:?\s*(\S+)", ()),
    (r"\"(\w+)\"\s*:", ()), (r"(\w+)\(", ()), (r"#+\s*(.*)", ()), (r"(\d{1,3}(?:,\d{3})+)", ()),
]
REPLAY_FILES = sorted(REPLAYS.rglob("*.jsonl")) + sorted((EXAMPLE / "recorded").rglob("*.jsonl"))


def committed_texts() -> list[str]:
    """Every text of every arm of every committed replay."""
    texts = []
    for path in REPLAY_FILES:
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            for arm in json.loads(line).get("arms", {}).values():
                if isinstance(arm.get("text"), str):
                    texts.append(arm["text"])
    return texts


def _task_patterns(where: str) -> list[tuple[str, tuple[str, ...]]]:
    """The regex steps of the bundled and example tasks: of their answer chains
    (where="free") or of their gold chains (where="gold")."""
    out = []
    for path in [*TASK_CONF.glob("*.yaml"), *(EXAMPLE / "task").glob("*.yaml")]:
        data = yaml.safe_load(path.read_text())
        if "extract" not in data:
            continue
        steps = data["extract"]["free"] if where == "free" else \
            data["dataset"]["gold"].get("extract", [])
        out += [(s["pattern"], tuple(s.get("flags", []))) for s in steps if s["kind"] == "regex"]
    return out


def committed_golds() -> list[str]:
    """Every raw gold answer a bundled task's gold chain reads (its whole data file)."""
    golds = []
    for path in TASK_CONF.glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        gold = data.get("dataset", {}).get("gold", {})
        if gold.get("extract"):
            rows = (TASK_CONF / data["dataset"]["path"]).read_text().splitlines()
            golds += [str(json.loads(r)[gold["path"]]) for r in rows if r.strip()]
    return golds


def _old(pattern: str, flags: tuple[str, ...], text: str, match: str) -> tuple | None:
    rx = re.compile(pattern, sum((getattr(re, f) for f in flags), 0))
    m = rx.search(text) if match == "first" else next(iter(deque(rx.finditer(text), 1)), None)
    return None if m is None else tuple(m.span(g) for g in range(rx.groups + 1))


def _new(pattern: str, flags: tuple[str, ...], text: str, match: str) -> tuple | None:
    rx = compile_task_regex(pattern, flags)
    spans = rx.search(text) if match == "first" else rx.last(text)
    return None if spans is None else tuple(spans)


def test_corpus_covers_the_committed_outputs() -> None:
    texts = committed_texts()
    assert len(REPLAY_FILES) >= 9 and len(texts) > 6000
    assert len(_task_patterns("free")) >= 3 and len(_task_patterns("gold")) >= 1
    assert len(committed_golds()) >= 1319


def _same_extractions(pattern: str, flags: tuple[str, ...], texts: list[str]) -> int:
    old_pattern = OLD_GSM8K if "[Aa]nswer\\s*[:=]" in pattern else pattern
    matched = 0
    for text in texts:
        for match in ("first", "last"):
            old = _old(old_pattern, flags, text, match)
            assert _new(pattern, flags, text, match) == old, (pattern, match, text[:300])
            matched += old is not None
    return matched


@pytest.mark.parametrize("pattern,flags", CORPUS + _task_patterns("free"))
def test_every_committed_output_extracts_as_python_re_did(pattern: str,
                                                          flags: tuple[str, ...]) -> None:
    matched = _same_extractions(pattern, flags, committed_texts())
    assert matched > 0 or pattern in {CORPUS[0][0], CORPUS[1][0]}, pattern


@pytest.mark.parametrize("pattern,flags", _task_patterns("gold"))
def test_every_gold_extracts_as_python_re_did(pattern: str, flags: tuple[str, ...]) -> None:
    golds = committed_golds()
    assert _same_extractions(pattern, flags, golds) == 2 * len(golds)


@pytest.mark.parametrize("pattern", [r"a*", r"(a)|(b)", r"x?", r"\d+(?:\.\d+)?", r"(b*)$",
                                     r"^a", r"(?m)^\w*$", r"(a)(z)?", r"####(.*)$", r""])
def test_native_match_calls_agree_with_the_re2_module(pattern: str) -> None:
    """On ASCII text, search, fullmatch and last call RE2's match directly (no match
    object per match): the same spans as through the re2 module's finditer, empty
    matches and Python's `$` included."""
    import random

    from vbw.task.regex import Regex

    fast = compile_task_regex(pattern, ("DOTALL",) if "#" in pattern else ())
    assert fast._match is not None  # the native path is the one under test
    slow = Regex(fast._rx)
    slow._match = None
    rng = random.Random(pattern)
    for _ in range(2000):
        text = "".join(rng.choice("ab1.2z\n ") for _ in range(rng.randint(0, 12)))
        for how in ("search", "fullmatch", "last"):
            assert getattr(fast, how)(text) == getattr(slow, how)(text), (how, text)


# -- issue 30, items 11 and 14 ------------------------------------------------------------
import re as _re  # noqa: E402
import time as _time  # noqa: E402

from vbw.task.regex import MAX_GROUPS, compile_task_regex as _compile  # noqa: E402


def test_empty_upto_repeat_is_pythons_zero_or_more() -> None:
    """Python 3.11 reads `a{,}` as `a{0,}`: it no longer stays literal text."""
    rx = _compile("a{,}")
    for text in ("aaa", "b", "a{,}"):
        m = _re.search("a{,}", text)
        assert rx.search(text) == [m.span()]
    assert rx.search("x") == [(0, 0)]


def test_upto_repeat_matches_empty() -> None:
    """`a{,3}` is `a{0,3}`: on `b` the empty match at 0, as Python; `{1,3}` would miss."""
    assert _re.search("a{,3}", "b").span() == (0, 0)
    assert _compile("a{,3}").search("b") == [(0, 0)]
    assert _compile("xa{,3}y").search("xy") == [(0, 2)]


@pytest.mark.parametrize("pattern, error", [
    (r"a\C", r"bad escape \\C"),
    ("(?P<vbw_eol_0>a)b$", "group 'vbw_eol_0': group names starting with vbw_ are reserved"),
    ("(?P<vbw_x>a)", "group 'vbw_x'"),
    ("a$\n", "text after \\$"),
    ("a$b", "text after \\$"),
    ("(a$)b", "text after \\$"),
    ("(a$|b)\n", "text after \\$"),
])
def test_refused_at_load_in_one_line(pattern: str, error: str) -> None:
    with pytest.raises(ValueError, match=error) as info:
        _compile(pattern)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("pattern", ["a$", "(a$)", "a$|b", "a$$", r"a$\Z", "(?m)a$\nb",
                                     "(a$|b)", "(a$)?$", "((a$)|b)|c", "(a$|[)]b)"])
def test_dollar_at_the_end_of_a_branch_is_kept(pattern: str) -> None:
    _compile(pattern)


def test_groups_at_the_cap() -> None:
    assert _compile("(a)" * MAX_GROUPS).groups == MAX_GROUPS
    with pytest.raises(ValueError, match=f"{MAX_GROUPS + 1} capture groups, over"):
        _compile("(a)" * (MAX_GROUPS + 1))
    _compile("(?:a)" * (MAX_GROUPS + 1))  # groups that capture nothing are not counted


def test_last_with_many_groups_scans_without_captures() -> None:
    """1,000 groups took 30 s per 2 KB; at the cap, 100,000 empty matches stay linear."""
    rx = _compile("(a)?" * MAX_GROUPS)
    start = _time.perf_counter()
    assert rx.last("b" * 100_000)[:2] == [(100_000, 100_000), (-1, -1)]
    assert _time.perf_counter() - start < 3


@pytest.mark.parametrize("pattern, text", [
    ("(a)(b)?", "ab a ab"), ("(a|b)*c", "abc bac c"), ("(x)?$", "ax\n"), ("(é)", "é e é"),
    ("(a*)", "aaba"), (r"(\d+)\.?", "1. 22 333."),
])
def test_last_gives_pythons_last_match_and_groups(pattern: str, text: str) -> None:
    want = list(_re.finditer(pattern, text))[-1]
    got = _compile(pattern).last(text)
    assert got == [want.span(g) for g in range(want.re.groups + 1)]


@pytest.mark.parametrize("pattern, text", [
    ("(?s).*?$", "a\n"), ("(?s)(a.*?)$", "ab\n"), ("a*?$", "aa\n"), ("a*$", "aa"),
])
def test_fullmatch_with_a_lazy_quantifier_before_dollar_is_pythons(pattern: str,
                                                                    text: str) -> None:
    assert _compile(pattern).fullmatch(text) == (_re.fullmatch(pattern, text) is not None)


def test_documented_differences_stay_as_documented() -> None:
    """docs/reference/task-format.md lists these: if one changes, change the docs."""
    # Turkish dotted/dotless i: RE2 folds by simple case folding only
    for pattern, text in (("i", "\u0130"), ("i", "\u0131"), ("\u0131", "I")):
        assert _re.search(pattern, text, _re.I) is not None
        assert _compile(pattern, ("IGNORECASE",)).search(text) is None
    # a capture inside a repeated group that can match empty: RE2's last non-empty turn
    assert _re.search("(a|)*", "aa").span(1) == (2, 2)
    assert _compile("(a|)*").search("aa") == [(0, 2), (1, 2)]
