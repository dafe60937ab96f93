"""Redaction: the one function that removes secrets from any text the project shows or relays.

`redact(text, secrets)` is used by every place that passes text to someone else: alert payloads
(defs/ops/alerts.py), the Tushare forwarder's error messages and relayed rows
(dataservice/tushare.py). It removes

- each given secret literally, in every spelling it can take in text (`spellings`): raw, inside a
  repr or `ascii()`, JSON-escaped once or twice, URL-encoded (`%2F`, and `+` for spaces);
- credentials inside URLs of any scheme (`user:password@`, `:password@`, `user@`);
- key-like URL query parameters (`?key=`, `&apikey=`, `&auth=`, `&sign=`), also when the whole
  query is URL-encoded (`%3Fkey%3D…`);
- `Authorization` schemes: `Bearer <anything up to white space>` (`Bearer abc$def!ghi`),
  `Basic …`, `token …`;
- secret-looking `name=value`, `name: value` and JSON `"name": "value"` pairs (token, secret,
  password, api_key, credentials, signature, …), whatever their quoting: a quoted value goes whole
  up to its closing quote (`"correct horse battery staple"`), also JSON-escaped once or twice
  (`\\"password\\": \\"…\\"`).
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable

REDACTED = "[redacted]"

# `user:password@`, `:password@` (the usual redis form, empty user) and `user@` in any scheme.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?:[^\s/@:?#]*:[^\s/@?#]*|[^\s/@:?#]+)@")
# `Bearer`/`Basic` take whatever follows up to white space or a closing quote; the looser `token`
# scheme needs 8 characters, so prose like "token: none" keeps its word.
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+)[^\s\"'\\]+")
_TOKEN_SCHEME = re.compile(r"(?i)\b(token)(\s+|:\s*)[A-Za-z0-9._~+/=-]{8,}")
_SECRET_WORDS = (r"token|secret|password|passwd|passphrase|pwd|credentials?|api[_-]?key|access[_-]?key"
                 r"|private[_-]?key|signature|sig")
# A quote as it appears around a name or value: `"`, `'`, or a quote escaped by any number of
# backslashes (JSON inside JSON inside a log line).
_QUOTE = r"(?:\\*[\"'])"
# `name=value`, `name: value`, `"name": "value"` and its escaped forms. The value is either quoted
# (everything up to the same quote, spaces included) or bare (up to a separator).
_SECRET_PAIR = re.compile(
    rf"(?i)\b(?P<name>[A-Za-z0-9_-]*(?:{_SECRET_WORDS}))"
    rf"(?P<sep>{_QUOTE}?\s*[=:]\s*)"
    rf"(?:(?P<open>{_QUOTE})(?P<quoted>.*?)(?P=open)|(?P<bare>[^\s&'\",;\\]+))")
# A URL's query parameter that is a key whatever its name's prefix; `%3F`/`%26`/`%3D` for a URL
# inside another URL's query.
_SECRET_QUERY = re.compile(
    r"(?i)((?:[?&;]|%3F|%26)(?:[A-Za-z0-9_-]*key|auth|pass|password|code|sign|signature|credential|token|secret)"
    r"(?:=|%3D))(?:[^&#\s'\"\\%]|%(?!26|23)[0-9A-Fa-f]{2})+")


def spellings(secret: str) -> list[str]:
    """How `secret` can appear in text: raw, inside a repr (escaped quotes and backslashes, or
    ascii() escapes), JSON-escaped once and twice, URL-encoded. Longest first, so that no spelling
    is half-replaced by a shorter one."""
    once = json.dumps(secret)[1:-1]
    forms = {
        secret,
        repr(secret)[1:-1],
        ascii(secret)[1:-1],
        once,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(once)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
    }
    return sorted((f for f in forms if f), key=len, reverse=True)


def _pair(match: re.Match[str], marker: str) -> str:
    if match.group("open") is not None:
        return f"{match.group('name')}{match.group('sep')}{match.group('open')}{marker}{match.group('open')}"
    return f"{match.group('name')}{match.group('sep')}{marker}"


def redact(text: str, secrets: Iterable[str] = (), *, marker: str = REDACTED) -> str:
    """`text` without the given secrets (every spelling) and without anything that looks like a
    credential (see the module docstring); `marker` stands where each was."""
    for form in sorted({f for secret in secrets if secret for f in spellings(secret)}, key=len, reverse=True):
        text = text.replace(form, marker)
    text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{marker}@", text)
    text = _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{marker}", text)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{marker}", text)
    text = _TOKEN_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{marker}", text)
    return _SECRET_PAIR.sub(lambda m: _pair(m, marker), text)
