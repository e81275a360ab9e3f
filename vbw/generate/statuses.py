"""What a failed chat-completions request means: worth another attempt, a schema the
server's engine cannot enforce (recorded as unsupported), or an error that stops the run.

Kept apart from the backend so the mapping from an HTTP status to an outcome is one small
function, read and tested on its own (the rules are in vbw.generate.server's docstring).
"""

from __future__ import annotations

from collections.abc import Mapping

from vbw.errors import EngineError, UnsupportedSchema
from vbw.generate.retry import Retry


class CutShort(Retry):
    """The server ended a stream with [DONE] but no finish_reason: ask again unstreamed,
    at once."""

    wait = False


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a Retry-After header asks for (None when absent or an HTTP date)."""
    try:
        return float(headers.get("Retry-After", "")) if headers else None
    except ValueError:
        return None  # an HTTP date: the plain backoff applies


def classify(status: int, message: str, where: str, has_schema: bool, engine: str,
             api_key_env: str | None, after: float | None) -> Exception:
    """The exception an HTTP status stands for; `message` is the server's, redacted and
    on one line, `where` the request as messages show it ("POST <url>")."""
    if status in (408, 429) or status >= 500:
        return Retry(f"HTTP {status}: {message}", after)
    if 300 <= status < 400:
        return EngineError(f"{where}: the server redirects (HTTP {status}); set "
                           "backend.base_url to the URL it redirects to")
    if status in (400, 422) and has_schema:
        return UnsupportedSchema(f"{engine} rejected the request carrying the "
                                 f"schema (HTTP {status}): {message}")
    hint = ""
    if status in (401, 403):
        hint = (f" (check the key in ${api_key_env})" if api_key_env
                else " (set backend.api_key_env)")
    return EngineError(f"{where} -> HTTP {status}: {message}{hint}")
