"""Dataset loading: a JSONL file's lines are split exactly as str.splitlines splits them,
a chunk at a time (vbw.task.dataset._lines), and a bad line keeps its number."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vbw.errors import DataError
from vbw.task import dataset

SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\n\n", ""]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_lines_are_splitlines_at_any_chunk_size(chunk: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dataset, "_CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(300):
        parts = SEPARATORS + ["a", "bc", " "]
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 40)))
        assert list(dataset._lines(text)) == text.splitlines(), repr(text)


def test_a_bad_line_is_named_by_its_number_across_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dataset, "_CHUNK", 16)
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\r\n\n{"a": 2}\u2028{"a": 3}\n' * 5 + "{bad\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"d\.jsonl:21: not valid JSON"):
        dataset.read_rows(path)
    path.write_text('{"a": 1}\r\n\n{"a": 2}\u2028{"a": 3}\n' * 5, encoding="utf-8")
    assert [r["a"] for r in dataset.read_rows(path)] == [1, 2, 3] * 5


def test_rows_are_what_json_decodes(tmp_path: Path) -> None:
    """Rows are decoded by orjson where it accepts the line, by json elsewhere: the values
    are json.loads' either way (NaN, an integer beyond 64 bits, a lone surrogate escape,
    a repeated key), and a bad line keeps json's message."""
    import json
    lines = ['{"a": 1, "b": 2.5, "c": "x\\u00e9"}', '{"a": NaN}', '{"a": 123456789012345678901234}',
             '{"a": "\\ud800"}', '{"a": 1, "a": 2}', '{"a": [1e400, -0.0]}']
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rows = dataset.read_rows(path)
    assert repr(rows) == repr([json.loads(x) for x in lines])
    path.write_text('{"a": 1}\n{"a": tru}\n')
    with pytest.raises(DataError, match=r"d.jsonl:2: not valid JSON \(Expecting value\)"):
        dataset.read_rows(path)


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_row_past_the_json_limits_is_one_line_naming_it(tmp_path: Path, suffix: str) -> None:
    """A row nested past MAX_DEPTH or holding an integer past MAX_INT_DIGITS digits is a
    DataError naming the file (and a .jsonl's line), not a RecursionError or int()'s
    ValueError; at the limits the row is read."""
    from vbw.task.jsontext.values import MAX_DEPTH, MAX_INT_DIGITS
    path = tmp_path / f"d{suffix}"
    wrap = (lambda row: f"[{row}]") if suffix == ".json" else (lambda row: f'{{"a": 1}}\n{row}')
    at = '{"a": ' + "[" * (MAX_DEPTH - 1 - (suffix == ".json")) + \
        "]" * (MAX_DEPTH - 1 - (suffix == ".json")) + f', "n": {"9" * MAX_INT_DIGITS}}}'
    path.write_text(wrap(at) + "\n")
    assert dataset.read_rows(path)[-1]["n"] == int("9" * MAX_INT_DIGITS)
    where = "d.jsonl:2" if suffix == ".jsonl" else "d.json"
    extra = suffix == ".json"  # the list of rows
    for row, why in [('{"a": ' + "[" * 3000 + "]" * 3000 + "}", f"nested {3001 + extra:,}"),
                     ('{"a": ' + '{"b": ' * 100_000 + "1" + "}" * 100_001,
                      f"nested {100_001 + extra:,}"),
                     ('{"n": ' + "9" * 5001 + "}", "an integer of 5,001 digits")]:
        path.write_text(wrap(row) + "\n")
        with pytest.raises(DataError, match=f"{where}: refused: {why}") as e:
            dataset.read_rows(path)
        assert "\n" not in str(e.value)
