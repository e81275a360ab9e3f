"""What every writer does to text before it reaches a file or a terminal: credentials
masked, and lone surrogates escaped so the text can be encoded at all.

One module, at the bottom of the layers (it imports nothing from vbw), so the config
files Hydra writes, sweep status and summaries, replays, reports and error messages all
apply the same rules:

- A URL's userinfo (`http://user:pass@host`) and the values of query parameters whose
  names look like credentials (`?api-key=`, `&token=`, `sig=`, ...) become `***`, wherever
  a URL appears in a text (`redact_text`), or in every string of a JSON-like structure
  (`redact_obj`).
- `Authorization: ...`, `Bearer <token>` and `Basic <token>` quoted by a server lose the token.
- Known secret values (the API key, the URL's password) are found in the text as it is,
  before it is flattened to one line or cut to a length, and also when whitespace (a line
  break) splits them (`redact`).
- Model text is not rewritten by these patterns (a completion may legitimately contain a
  URL); only the API key's own value is masked there (`mask_exact`).
- A lone surrogate (`"\\ud800"` in a server's JSON) cannot be encoded as UTF-8; written
  as its `\\udXXX` escape it stays lossless in JSON and readable elsewhere (`escape_surrogates`).

Every pattern is matched in time linear in the text (no nested quantifiers; each scan
stops at a delimiter the next match cannot cross).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"
MIN_SECRET = 4  # shortest known secret value masked in messages
MIN_TEXT_SECRET = 8  # shortest known secret masked in model text (shorter ones are words)

# names of query parameters that carry a credential (Azure's api-key, signed URLs' sig, ...)
KEYLIKE = re.compile(r"key|token|secret|sig|passw|pwd|auth|credential|session", re.I)

_USERINFO = re.compile(r"://[^/\s?#]*@")  # greedy to the last @ before the host
_QUERY_PARAM = re.compile(r"([?&;])([^=&;\s#?]+)=([^&;\s#'\"<>]*)")
# same-line whitespace only: "basic\n  hydra/launcher" in a YAML file is not a token
_AUTH_HEADER = re.compile(r"(authorization[\"']?[ \t]*[:=][ \t]*[\"']?)([^\s\"',;]+)"
                          r"([ \t]+[A-Za-z0-9._~+/=-]+)?", re.I)
_SCHEME_TOKEN = re.compile(r"\b(bearer|basic)([ \t]+)([A-Za-z0-9._~+/-]+=*)", re.I)
_SURROGATE = re.compile("[\ud800-\udfff]")


class Secret:
    """A credential that prints as *** in repr, str and f-strings: holding it in a Secret
    means no message, log line or repr built from the object can leak it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def _param(m: re.Match[str]) -> str:
    return f"{m[1]}{m[2]}={MASK}" if KEYLIKE.search(m[2]) and m[3] else m[0]


def _looks_like_token(token: str) -> bool:
    """A credential, not a word: `Basic authentication` keeps its word, `Basic dXNlcjpw`
    and `Bearer sk-live-123` do not keep their token."""
    core = token.rstrip("=")
    return len(core) >= 8 and (token != core or any(c.isdigit() or c in "+/_-." for c in core)
                               or (not core.islower() and not core.istitle()))


def _scheme_token(m: re.Match[str]) -> str:
    return f"{m[1]}{m[2]}{MASK}" if _looks_like_token(m[3]) else m[0]


def _auth_header(m: re.Match[str]) -> str:
    """`Authorization: Bearer ***` (the scheme kept), or `Authorization: ***`."""
    return f"{m[1]}{m[2]} {MASK}" if m[3] else f"{m[1]}{MASK}"


def redact_urls(text: str) -> str:
    """`text` with URL userinfo and key-like query values masked: the rules whose mask
    never starts a value (safe inside YAML, where a leading * is an alias)."""
    if "://" in text:
        text = _USERINFO.sub(f"://{MASK}@", text)
    if "=" in text:
        text = _QUERY_PARAM.sub(_param, text)
    return text


def redact_text(text: str) -> str:
    """`text` with URL userinfo, key-like query values and Authorization/Bearer/Basic
    tokens masked (see the module docstring)."""
    text = _AUTH_HEADER.sub(_auth_header, redact_urls(text))
    return _SCHEME_TOKEN.sub(_scheme_token, text)


def _spread(value: str) -> re.Pattern[str]:
    """`value` matched also when whitespace (a wrapped line) splits it anywhere."""
    return re.compile(r"\s*".join(re.escape(c) for c in value))


def redact(text: str, secrets: Iterable[Secret] = ()) -> str:
    """`text` with every known secret masked (also when whitespace splits it), then the
    patterns of `redact_text`. Call it on the whole text, before any flattening or cut:
    a cut can leave a prefix of a key that no longer matches. Values shorter than
    MIN_SECRET are left alone: they would match inside ordinary words."""
    for secret in sorted(secrets, key=lambda s: -len(s.reveal())):
        value = secret.reveal()
        if len(value) >= MIN_SECRET:
            text = text.replace(value, MASK)
            if any(c in text for c in " \t\r\n\f\v") and value[0] in text:
                text = _spread(value).sub(MASK, text)
    return redact_text(text)


def mask_exact(text: str, secrets: Iterable[Secret]) -> tuple[str, bool]:
    """Model text with each secret of at least MIN_TEXT_SECRET characters replaced by
    ***, and whether any was (the record says so)."""
    found = False
    for secret in sorted(secrets, key=lambda s: -len(s.reveal())):
        value = secret.reveal()
        if len(value) >= MIN_TEXT_SECRET and value in text:
            text, found = text.replace(value, MASK), True
    return text, found


def redact_obj(obj: Any) -> Any:
    """A JSON-like structure with `redact_text` applied to every string (keys included)."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, dict):
        return {redact_obj(k): redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v) for v in obj]
    return obj


def escape_surrogates(text: str) -> str:
    """Each lone surrogate as its 6-character escape `\\udXXX`: inside a JSON string it
    reads back as the same character; elsewhere it shows what the text held. A text
    without one is returned as is, known by C-speed tests (ASCII; else UTF-8 encodes it,
    which it does unless the text holds a surrogate): a regex search ran ~100x slower,
    on every line of a merged replay and every report file."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
