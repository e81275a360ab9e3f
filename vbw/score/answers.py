"""answers.csv: what each arm answered on each item, a row per item and arm (and per field
or gold parameter), rendered by the scoring pass as it scores the item and kept in part
files, never all in memory; the report writes them in task order (vbw.report.writers).

The columns and what an empty cell means: docs/reference/report.md, section answers.csv.
Each process that scores writes its own part file into the folder of the pass that made
the parts (one per scoring pass, in the system's temporary folder), with each item's
position, offset and length kept in memory (24 bytes an item); `rows` reads them back by
position. The folders are removed by `close` (at the latest when a `closed_after` block
ends: a task's run, vbw.modes.scoring), or when the parts are dropped.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from vbw.redact import escape_surrogates
from vbw.score.cells import cell, quoted, spell
from vbw.task.arms import Arm
from vbw.task.fields import RIGHT, WRONG, FieldRow
from vbw.task.kinds import Part

COLUMNS = ("id", "arm", "field", "group", "answer", "gold", "valid", "right",
           "finish_reason", "output_tokens", "seconds", "interventions")
HEADER = ",".join(COLUMNS) + "\n"
SAMPLE_COLUMN = "sample"  # last, only in a run of k > 1 samples: 1..k
_CHUNK = 1 << 20  # bytes written, and handed to the report file, at a time
_FLAG = {-1: "", 0: "0", 1: "1"}
_FIELD_RIGHT = {RIGHT: "1", WRONG: "0"}  # n/a and absent: empty


def text(value: str) -> str:
    """A text cell: formula-neutralised, quoted where it must be."""
    return quoted(cell(value))


_spelt: dict[Any, str] = {}  # the cells of strings and numbers seen lately (answers repeat)


def json_cell(value: Any) -> str:
    """A value's cell: its JSON text, bounded as report.html bounds it (`spell`); empty for
    None. A short string's or a number's cell is remembered (by type and value; at most
    `_SPELT` of them, each string at most `_SHORT` characters: a long one is not kept)."""
    if value is None:
        return ""
    kind = type(value)
    if not (kind is int or (kind is str and len(value) <= _SHORT)
            or (kind is float and value)):  # (0.0 and -0.0 are one key: not remembered)
        return quoted(cell(spell(value)))
    done = _spelt.get((kind, value))
    if done is None:
        if len(_spelt) >= _SPELT:
            _spelt.clear()
        done = _spelt[kind, value] = quoted(cell(spell(value)))
    return done


_SPELT, _SHORT = 4096, 100
_DIGITS = frozenset("0123456789")


def _number(value: Any) -> str:
    """A number from the record: its text, through `text` unless it starts with a digit."""
    if value is None:
        return ""
    s = str(value)
    return s if s[:1] in _DIGITS else text(s)


_FINISH = {None: "", "stop": "stop", "length": "length"}


_heads: list[Any] = [None, []]  # the last arms seen, and their (key, its cell + ",")


def _arm_cells(arms: list[Arm]) -> list[tuple[str, str]]:
    """Each arm's key and its cell, worked out once per list of arms (Arm.key builds the
    key anew on each look-up)."""
    if _heads[0] is not arms:
        _heads[:] = [arms, [(a.key, text(a.key)) for a in arms]]
    return _heads[1]


def item_rows(arms: list[Arm], rec: Any, item: Any, vrow: Sequence[int],
              rrow: Sequence[bool], answers: Sequence[Any],
              fields: Sequence[FieldRow] | None, names: Sequence[str], sample: int = 0) -> str:
    """One item's rows, in arm order, each arm's field rows after its answer's row:
    `rec` its ScoredRecord, `vrow`/`rrow`/`answers`/`fields` each arm's validity,
    correctness, extracted answer and FieldRow (vbw.score.states.arm_states), `names`
    the task's fields (vbw.task.fields.FieldReader.names); `sample`: the sample's number
    (1..k) in a run of k > 1 samples, its last cell (0: no such cell)."""
    end = f",{sample}\n" if sample else "\n"
    item_id, gold = text(item.id), json_cell(item.gold)
    raws, spans = rec.arms or {}, rec.interventions or {}
    out = []
    number, finishes = _number, _FINISH
    for j, (arm, key) in enumerate(_arm_cells(arms)):
        raw = raws.get(arm) or {}
        finish = raw.get("finish_reason")
        events = spans.get(arm)
        valid = _FLAG[vrow[j]]
        out.append(f"{item_id},{key},,,{json_cell(answers[j])},{gold},{valid},"
                   f"{'1' if rrow[j] else '0'},"
                   f"{finishes[finish] if finish in finishes else text(finish)},"
                   f"{number(raw.get('n_tokens'))},{number(raw.get('seconds'))},"
                   f"{'' if events is None else len(events)}{end}")
        if fields is not None:
            out.extend(_field_rows(f"{item_id},{key},", f",{valid},", fields[j], names,
                                   item, answers[j], end))
    return "".join(out)


def _field_rows(head: str, valid: str, row: FieldRow, names: Sequence[str], item: Any,
                answer: Any, end: str) -> Iterator[str]:
    """An arm's rows per named field (its value and gold) or per gold parameter (the
    answer's value of it, the gold's allowed values, its group)."""
    if row.values and isinstance(row.values[0], Part):
        given = answer if isinstance(answer, dict) else {}
        for part in row.values:
            yield (f"{head}{text(part.name)},{text(part.group)},"
                   f"{json_cell(given.get(part.name))},{json_cell(item.gold.get(part.name))}"
                   f"{valid}{'1' if part.right else '0'},,,,{end}")
        return
    for name, value, code in zip(names, row.values, row.codes):
        yield (f"{head}{text(name)},,{json_cell(value)},{json_cell(item.field_gold[name])}"
               f"{valid}{_FIELD_RIGHT.get(code, '')},,,,{end}")


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # never a forked child's copy of the parts
        shutil.rmtree(folder, ignore_errors=True)


_blocks: list[list[AnswerParts]] = []  # per `closed_after` block open: the parts made in it


@contextmanager
def closed_after() -> Iterator[None]:
    """Every AnswerParts this process makes within the block is closed (its part files
    removed) when the block ends, whether it ends in an error or not."""
    made: list[AnswerParts] = []
    _blocks.append(made)
    try:
        yield
    finally:
        _blocks.remove(made)
        for parts in made:
            parts.close()


class AnswerParts:
    """answers.csv's rows, item by item (see the module docstring): a Tally member
    (vbw.score.tally, Combine.NESTED) whose `state()` names its part files."""

    def __init__(self, samples: int = 1) -> None:
        """`samples`: k, the samples per item and arm (k > 1: the `sample` column)."""
        self.header = HEADER if samples == 1 else HEADER[:-1] + f",{SAMPLE_COLUMN}\n"
        if _blocks:
            _blocks[-1].append(self)
        self.folder = tempfile.mkdtemp(prefix="vbw-answers-")
        self._gone = weakref.finalize(self, _remove, self.folder, os.getpid())
        self._adopted: list[weakref.finalize] = []
        self._pid, self._count = -1, 0  # the process whose part is open; parts opened
        self._merged: list[tuple[str, bytes, bytes, bytes]] = []  # other processes' parts

    def _open(self) -> None:
        """This process's own part (a forked child drops the copy of its parent's)."""
        self._pid, self._count = os.getpid(), self._count + 1
        self._path = os.path.join(self.folder, f"part-{self._pid}-{self._count}")
        os.close(os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._buf: list[bytes] = []
        self._size = self._at = 0
        self._pos, self._off, self._len = array("q"), array("q"), array("q")

    def add(self, pos: int, rows: str) -> None:
        """Keep an item's rows (item_rows) at its position."""
        if self._pid != os.getpid():
            self._open()
        data = escape_surrogates(rows).encode("utf-8")
        self._buf.append(data)
        self._pos.append(pos)
        self._off.append(self._at)
        self._len.append(len(data))
        self._at += len(data)
        self._size += len(data)
        if self._size >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._pid == os.getpid() and self._buf:
            data = memoryview(b"".join(self._buf))
            self._buf, self._size = [], 0
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND)
            try:
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)

    def _parts(self) -> list[tuple[str, bytes, bytes, bytes]]:
        self._flush()
        own = [(self._path, self._pos.tobytes(), self._off.tobytes(), self._len.tobytes())] \
            if self._pid == os.getpid() else []
        return own + self._merged

    def state(self) -> dict[str, Any]:
        """The parts, for `merge` into another pass, which then removes this pass's
        folder if this process made it (a pass made in a forked child: mode=merge's)."""
        self._gone.detach()
        return {"folder": self.folder, "parts": self._parts()}

    def merge(self, theirs: dict[str, Any]) -> None:
        """Take in another pass's parts; a folder that pass made is removed with ours."""
        if theirs["folder"] != self.folder:
            self._adopted.append(weakref.finalize(self, _remove, theirs["folder"],
                                                  os.getpid()))
        known = {p[0] for p in self._merged} | ({self._path} if self._pid >= 0 else set())
        self._merged.extend(p for p in theirs["parts"] if p[0] not in known)

    def rows(self) -> Iterator[str]:
        """answers.csv's text in parts: the header, then every item's rows by position
        (an item kept twice: its last rows)."""
        parts = self._parts()
        yield self.header
        if not parts:
            return
        pos = np.concatenate([np.frombuffer(p[1], dtype=np.int64) for p in parts])
        off = np.concatenate([np.frombuffer(p[2], dtype=np.int64) for p in parts])
        size = np.concatenate([np.frombuffer(p[3], dtype=np.int64) for p in parts])
        which = np.repeat(np.arange(len(parts)), [len(p[1]) // 8 for p in parts])
        order = np.argsort(pos, kind="stable")
        last = np.ones(len(order), dtype=bool)
        last[:-1] = pos[order][1:] != pos[order][:-1]
        files = [open(p[0], "rb") for p in parts]  # noqa: SIM115 (closed below)
        try:
            at = [0] * len(files)  # where each file is read next: a seek only when not there
            out, held = [], 0
            for k, o, n in zip(which[order][last].tolist(), off[order][last].tolist(),
                               size[order][last].tolist()):
                f = files[k]
                if at[k] != o:
                    f.seek(o)
                out.append(f.read(n))
                at[k] = o + n
                held += n
                if held >= _CHUNK:
                    yield b"".join(out).decode("utf-8")
                    out, held = [], 0
            yield b"".join(out).decode("utf-8")
        finally:
            for f in files:
                f.close()

    def close(self) -> None:
        """Remove the part files (this pass's folder and those it took in)."""
        self._pid = -1
        for gone in [self._gone, *self._adopted]:
            gone()
