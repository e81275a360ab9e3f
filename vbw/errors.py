"""The exception tree. Every error a user can cause is a VbwError; the CLI prints its
one-line message and exits 2. Anything else is a bug and keeps its traceback."""

from __future__ import annotations


def one_line(exc: BaseException, *, typed: bool = True) -> str:
    """An exception's message on one line (libraries wrap theirs), for quoting inside ours."""
    text = " ".join(str(exc).split())
    if not typed:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class VbwError(Exception):
    """A usage or setup error: bad config, bad task file, missing replay or model."""

    exit_code = 2

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class ConfigError(VbwError):
    """A config, task file or override failed validation (names file, field and value)."""


class DataError(VbwError):
    """A dataset file is missing, unreadable, or a row lacks a declared field."""


class ReplayError(VbwError):
    """A replay file is missing, malformed, or does not belong to the task."""


class EngineError(VbwError):
    """The live stack failed: missing extra, model file, canary, or a constraint that broke."""


class UnsupportedSchema(VbwError):
    """An engine cannot compile a schema; the item is recorded and excluded, not failed."""
