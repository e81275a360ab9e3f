"""The writers of output sets: which file each output name writes, and the one function
that writes a set.

How it works and why: docs/design.md, section vbw.report.writers.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable, ClassVar, Generic, TextIO, TypeVar

from pydantic_core import PydanticSerializationError

from vbw.errors import ConfigError
from vbw.redact import escape_surrogates
from vbw.registry import Registry
from vbw.report.browser import Browser
from vbw.report.files import ledger_csv, write_set
from vbw.report.html import html_chunks
from vbw.report.markdown import coverage, render_markdown
from vbw.report.svg import render_svg
from vbw.score.answers import AnswerParts
from vbw.score.results import Report

MANIFEST_WRITER = "json"  # always written, and last
ANSWERS_WRITER = "answers"  # answers.csv: always written where scoring kept its rows

S = TypeVar("S")


@dataclass(frozen=True)
class Writer(Generic[S]):
    """One output: the file it writes into the set's folder, and its text for a subject.
    A `streamed` writer's render gives the text in parts, written as they come (a page
    that may be far larger than the data it holds); if it cannot be built, the rest of
    the set is written all the same (vbw.report.files.write_set)."""

    file: str
    render: Callable[[S], str] | Callable[[S], Iterable[str]]
    streamed: bool = False


def chosen(outputs: Collection[str] | None) -> set[str]:
    """The writers that run: vbw's own by default; the manifest writer and a report's
    answers.csv always."""
    return set(OUTPUT_NAMES if outputs is None else outputs) | {MANIFEST_WRITER,
                                                                ANSWERS_WRITER}


def write_outputs(out_dir: Path, writers: Mapping[str, Writer[S]], subject: S,
                  outputs: Collection[str] | None = None,
                  err: TextIO | None = None) -> dict[str, str]:
    """Render the chosen writers' files for `subject`, then write them atomically, the
    manifest (the `json` writer's file) last; streamed writers are rendered while they
    are written; a not chosen writer's file left by an older run is removed. Returns what
    was rendered whole, file name -> text."""
    run = chosen(outputs)
    contents = {w.file: w.render(subject) for name, w in writers.items()
                if name in run and not w.streamed}
    pages = {w.file: (lambda w=w: w.render(subject)) for name, w in writers.items()
             if name in run and w.streamed}
    dropped = [w.file for name, w in writers.items() if name not in run]
    write_set(out_dir, contents, manifest=writers[MANIFEST_WRITER].file, drop=dropped,
              pages=pages, err=err)
    return contents


def files_written(out_dir: Path, writers: Mapping[str, Writer[S]],
                  outputs: Collection[str] | None = None) -> list[str]:
    """The chosen writers' files now in `out_dir`, in the writers' order: what a closing
    line may say was written (a page that could not be built was left out)."""
    run = chosen(outputs)
    return [w.file for name, w in writers.items()
            if name in run and (out_dir / w.file).is_file()]


def written_line(what: str, where: Path, files: Iterable[str]) -> str:
    """The closing line of a run, a comparison or a sweep: where, and the files written
    there (only those: `outputs=[json,md]` writes no page)."""
    return f"{what} written to {where}: {', '.join(files)}"


@dataclass(frozen=True)
class ReportSet:
    """What a report's writers render: the report (with its coverage sentence) and the
    item browser's data, or what builds it when the page is written (None: report.html
    holds the tables and panels only); answers.csv's rows, as scoring kept them."""

    report: Report
    browser: Browser | Callable[[], Browser] | None
    answers: AnswerParts | None = None

    def browser_data(self) -> Browser | None:
        return self.browser() if callable(self.browser) else self.browser

    @cached_property
    def svg(self) -> str:  # quadrants.svg, also inlined in report.html
        return render_svg(self.report)

    @cached_property
    def markdown(self) -> str:  # also printed: a lone surrogate (a server's) as its escape
        return escape_surrogates(render_markdown(self.report))


class Output(ABC):
    """A kind of report file: `name` is its `outputs=` value, `file` the file it writes
    into the report's folder, `render` its text for a ReportSet (`streamed`: in parts, as
    Writer says). The manifest's file, report.json, is not another kind's to take."""

    name: ClassVar[str]
    file: ClassVar[str]
    streamed: ClassVar[bool] = False

    @staticmethod
    @abstractmethod
    def render(s: ReportSet) -> str | Iterable[str]:
        """The file's text.

        Args:
            s: the report set (the report and what its files share).
        Returns:
            The text; for a `streamed` kind, its parts in order.
        """

    @classmethod
    def writer(cls) -> Writer[ReportSet]:
        """The Writer that writes this kind's file into a report's folder.

        Returns:
            A Writer of `file`, rendered by `render` (in parts when `streamed`).
        """
        return Writer(cls.file, cls.render, cls.streamed)


OUTPUTS: Registry[Output] = Registry("output", tag="name", group="vbw.outputs")


@OUTPUTS.register
class JsonOutput(Output):
    name, file = "json", "report.json"

    @staticmethod
    def render(s: ReportSet) -> str:
        try:
            return s.report.model_dump_json(by_alias=True, indent=1) + "\n"
        except PydanticSerializationError:  # a lone surrogate, kept from a server's text:
            data = s.report.model_dump(mode="json", by_alias=True)  # pydantic cannot
            return json.dumps(data, indent=1, ensure_ascii=False) + "\n"  # encode it


@OUTPUTS.register
class MarkdownOutput(Output):
    name, file = "md", "report.md"

    @staticmethod
    def render(s: ReportSet) -> str:
        return s.markdown


@OUTPUTS.register
class HtmlOutput(Output):
    name, file, streamed = "html", "report.html", True

    @staticmethod
    def render(s: ReportSet) -> Iterable[str]:
        return html_chunks(s.report, s.svg, s.browser_data())


@OUTPUTS.register
class SvgOutput(Output):
    name, file = "svg", "quadrants.svg"

    @staticmethod
    def render(s: ReportSet) -> str:
        return s.svg


@OUTPUTS.register
class LedgerOutput(Output):
    name, file = "csv", "ledger.csv"

    @staticmethod
    def render(s: ReportSet) -> str:
        return ledger_csv(s.report)


OUTPUT_NAMES = tuple(OUTPUTS.classes)  # vbw's own; the default of RunConfig.outputs
REPORT_WRITERS: dict[str, Writer[ReportSet]] = {k: c.writer() for k, c in OUTPUTS.classes.items()}
# not an `outputs` choice: written whatever `outputs` says, as report.json is
REPORT_WRITERS[ANSWERS_WRITER] = Writer("answers.csv", lambda s: s.answers.rows(), True)


def report_writers(outputs: Collection[str] | None) -> dict[str, Writer[ReportSet]]:
    """vbw's report writers, and those of the installed packages' kinds `outputs` names
    (the entry points are read only for a name vbw's own writers do not have); a name no
    kind has, or a plugin's file that another chosen writer writes, is a ConfigError."""
    table = dict(REPORT_WRITERS)
    for name in outputs or ():
        if name not in table:
            if name not in OUTPUTS:
                raise ConfigError(f"config: outputs: {OUTPUTS.unknown(name)}")
            table[name] = _confined(name, OUTPUTS.get(name).writer())
    taken: dict[str, str] = {}
    for name, w in table.items():
        if name in chosen(outputs):
            if w.file in taken:
                raise ConfigError(f"config: outputs: {name!r} and {taken[w.file]!r} both write "
                                  f"{w.file}; choose one")
            taken[w.file] = name
    return table


def _confined(name: str, w: Writer[S]) -> Writer[S]:
    """A plugin's writer, whose `file` is a plain file name: it writes into the run's
    folder and nowhere else (no folder part, absolute or `..`; no hidden name, which is
    vbw's own temporary and lock files')."""
    file = w.file
    if not isinstance(file, str) or not file or file.startswith(".") or \
            any(c in file for c in "/\\\0") or Path(file).is_absolute():
        raise ConfigError(f"config: outputs: {name!r} writes {file!r}, not a file name "
                          "in the run's folder (a plain name: no folder part, no leading "
                          "dot)")
    return w


def report_files(out_dir: Path, outputs: Collection[str] | None = None) -> list[str]:
    """The report files a run wrote into `out_dir` (see files_written)."""
    return files_written(out_dir, report_writers(outputs), outputs)


def write_reports(r: Report, out_dir: Path,
                  browser: Browser | Callable[[], Browser] | None = None,
                  outputs: Collection[str] | None = None, err: TextIO | None = None,
                  answers: AnswerParts | None = None) -> str:
    """Write a report's files into out_dir (`outputs`: which; None: all); return the
    markdown, which the CLI prints whether or not report.md is written. `browser` is
    report.html's item data (vbw.report.browser), or what builds it; the page is streamed
    to its file, and if it cannot be built the others are still written and one line on
    `err` says why. `answers`: answers.csv's rows (vbw.score.answers), streamed to it
    like the page; None: no answers.csv (an older run's is removed)."""
    s = ReportSet(r.model_copy(update={"coverage": coverage(r)}), browser,  # as report.md says
                  answers)
    writers = report_writers(outputs)
    if answers is None:
        (out_dir / writers.pop(ANSWERS_WRITER).file).unlink(missing_ok=True)
    write_outputs(out_dir, writers, s, outputs, err)
    return s.markdown
