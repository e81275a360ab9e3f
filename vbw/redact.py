"""What every writer does to text before it reaches a file or a terminal: credentials
masked, and lone surrogates escaped so the text can be encoded at all.

One module, at the bottom of the layers (it imports nothing from vbw), so the config
files Hydra writes, sweep status and summaries, replays, reports and error messages all
apply the same rules (masking in time linear in the text).

How it works and why: docs/design.md, section vbw.redact.
"""

from __future__ import annotations

import json
import re
from base64 import b64encode, urlsafe_b64encode
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, unquote_plus

MASK = "***"
MIN_SECRET = 4  # shortest known secret value masked in messages
MIN_TEXT_SECRET = 8  # shortest known secret masked in model text (shorter ones are words)

# Query parameters whose values are credentials: a name that contains one of these,
# ignoring case (`x-api-key`, `refresh_token`, `X-Amz-Signature`, Azure's `sig`, OAuth's
# `code`), has its value masked and dropped from the URL a record shows.
SECRET_PARAMS = ("key", "api_key", "apikey", "token", "access_token", "auth", "password",
                 "pass", "passwd", "pwd", "secret", "client_secret", "code", "jwt",
                 "signature", "sig", "session", "credential")
_SECRET_PARAM = re.compile("|".join(sorted(SECRET_PARAMS, key=len, reverse=True)), re.I)
# what may sit inside a known secret and still show it: whitespace (a wrapped line) and
# invisible characters (zero-width space, non-joiner, joiner, word joiner, BOM, soft hyphen)
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# ... also as a JSON string escapes them (a server's nested error detail is quoted as JSON)
_ESCAPED = "|".join([r"\\[nrtf]", *(r"\\u" + "".join(f"[{d.upper()}{d}]" if d.isalpha() else d
                                                   for d in f"{ord(c):04x}") for c in INVISIBLE)])
_GAP = f"(?:[\\s{INVISIBLE}]|{_ESCAPED})*"
_NO_INVISIBLE = dict.fromkeys(map(ord, INVISIBLE))

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

    __slots__ = ("_value", "_forms")

    def __init__(self, value: str) -> None:
        self._value = value
        self._forms: re.Pattern[str] | None = None

    def reveal(self) -> str:
        return self._value

    def forms(self) -> re.Pattern[str]:
        """The value in every form the module docstring lists (compiled once)."""
        if self._forms is None:
            self._forms = _forms(self._value)
        return self._forms

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def secret_param(name: str) -> bool:
    """Whether a query parameter `name` carries a credential (SECRET_PARAMS), also when
    written URL-encoded (`%63ode`, as a server decodes it) or with invisible characters."""
    if "%" in name or "+" in name:
        name = unquote_plus(name)
    return _SECRET_PARAM.search(name.translate(_NO_INVISIBLE)) is not None


def _param(m: re.Match[str]) -> str:
    return f"{m[1]}{m[2]}={MASK}" if m[3] and secret_param(m[2]) else m[0]


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


def _hex(byte: int) -> str:
    """A byte's two hex digits, either case: `%2f` is `%2F`."""
    return "".join(d if d.isdigit() else f"[{d}{d.lower()}]" for d in f"{byte:02X}")


def _char(c: str) -> str:
    """One character of a secret: as is, percent-encoded, `+` for a space, or as a JSON
    string escapes it (`\\u00e9`, `\\"`, `\\/`)."""
    alts = [re.escape(c)] + ([r"\+"] if c == " " else [])
    try:
        alts.append("".join(f"%{_hex(b)}" for b in c.encode("utf-8")))
    except UnicodeEncodeError:  # a lone surrogate has no percent form
        pass
    escaped = json.dumps(c)[1:-1] if c != "/" else "\\/"
    if escaped != c:
        alts.append(re.sub(r"[a-f]", lambda m: f"[{m[0]}{m[0].upper()}]", re.escape(escaped)))
    return f"(?:{'|'.join(alts)})"


def _forms(value: str) -> re.Pattern[str]:
    """`value` as is, URL-decoded and base64-encoded (both alphabets, padding optional),
    each also percent-encoded and split anywhere by _GAP."""
    if not value:
        return re.compile("(?!)")  # matches nothing (masking an empty value would insert ***)
    raw = value.encode("utf-8", "surrogatepass")
    coded = {b64encode(raw).decode().rstrip("="), urlsafe_b64encode(raw).decode().rstrip("=")}
    plain = [f for f in dict.fromkeys([value, unquote(value)]) if f]
    forms = [_GAP.join(_char(c) for c in form) for form in plain]
    forms += [_GAP.join(_char(c) for c in form) + "=*" for form in sorted(coded)]
    # where a match can start: half the time of trying every form at every position
    starts = "".join(re.escape(c) for c in {f[0] for f in (*plain, *coded) if f} | {"%", "\\"})
    return re.compile(f"(?=[{starts}])(?:{'|'.join(forms)})")


def mask_text(text: str, secrets: Iterable[Secret],
              shortest: int = MIN_TEXT_SECRET) -> tuple[str, bool]:
    """`text` with every known secret of at least `shortest` characters masked in any
    of its forms (module docstring), longest first, and whether one was. Shorter values
    are left alone: they would match inside ordinary words."""
    found = False
    for secret in sorted(secrets, key=lambda s: -len(s.reveal())):
        if len(secret.reveal()) >= shortest:
            text, n = secret.forms().subn(MASK, text)
            found = found or n > 0
    return text, found


def mask_json(obj: Any, secrets: Iterable[Secret]) -> tuple[Any, bool]:
    """A parsed JSON value with `mask_text` applied to every string, keys included, and
    whether one changed. Containers are rewritten in place, without recursion (a deeply
    nested reply cannot exhaust the stack)."""
    secrets = tuple(secrets)
    found = False

    def mask(s: Any) -> Any:
        nonlocal found
        if not isinstance(s, str):
            return s
        s, hit = mask_text(s, secrets)
        found = found or hit
        return s

    stack, obj = [obj], mask(obj)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = [(mask(k), v) for k, v in node.items()]
            node.clear()
            node.update(items)
        slots = node.keys() if isinstance(node, dict) else \
            range(len(node)) if isinstance(node, list) else ()
        for k in slots:
            node[k] = mask(node[k])
            if isinstance(node[k], (dict, list)):
                stack.append(node[k])
    return obj, found


def redact(text: str, secrets: Iterable[Secret] = ()) -> str:
    """`text` with every known secret of at least MIN_SECRET characters masked in any of
    its forms, then the patterns of `redact_text`. Call it on the whole text, before any
    flattening or cut: a cut can leave a prefix of a key that no longer matches."""
    return redact_text(mask_text(text, secrets, MIN_SECRET)[0])


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
    which it does unless the text holds a surrogate), not a regex search: this runs on
    every line of a merged replay and every report file."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
