"""What a server says about its own software, for the replay header (best effort).

A replay made through a server cannot hash the model file, so the next best provenance
is what the server exposes: the HTTP `Server` header and the model's `owned_by` from
`GET /models` (every OpenAI-compatible server), llama-server's `/props` build, vLLM's
`/version`, Ollama's `/api/version`, and the title and version of a FastAPI server's
`/openapi.json` (llama-cpp-python's server, vLLM). Each probe has a short deadline for the
whole exchange and a size cap, and each may 404 or time out: the field is then simply
absent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vbw.generate.wire import Endpoint, one_line_text

PROBE_TIMEOUT = 3.0  # seconds per probe, all of it (connect, headers, body)
PROBE_BYTES = 2_000_000  # a larger probe reply is ignored
FIELD_LIMIT = 120  # characters kept per field

GetJson = Callable[[str, float], "tuple[Mapping[str, str] | None, Any]"]


def _str(obj: Any, *keys: str) -> str | None:
    """obj[k0][k1]... as a string, or None when absent or not a scalar."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return str(obj) if isinstance(obj, (str, int, float)) and str(obj) else None


def _owned_by(models: Any, model: str) -> str | None:
    entries = models.get("data") if isinstance(models, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _str(entry, "owned_by")
    return None


def probe_server(get_json: GetJson, endpoint: Endpoint, model: str) -> dict[str, str]:
    """The software fields the server exposes (see the module docstring); maybe empty."""
    found: dict[str, str | None] = {}
    headers, models = get_json(endpoint.url("/models"), PROBE_TIMEOUT)
    found["http_server"] = headers.get("Server") if headers is not None else None
    found["owned_by"] = _owned_by(models, model)
    _, api = get_json(endpoint.root_url("/openapi.json"), PROBE_TIMEOUT)
    title, version = _str(api, "info", "title"), _str(api, "info", "version")
    found["openapi"] = f"{title} {version}" if title and version else title
    found["llama_server_build"] = _str(get_json(endpoint.root_url("/props"), PROBE_TIMEOUT)[1],
                                       "build_info")
    found["version"] = _str(get_json(endpoint.root_url("/version"), PROBE_TIMEOUT)[1],
                            "version")
    found["ollama_version"] = _str(get_json(endpoint.root_url("/api/version"),
                                            PROBE_TIMEOUT)[1], "version")
    return {k: one_line_text(v, FIELD_LIMIT) for k, v in found.items() if v}
