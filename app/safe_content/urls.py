"""The one place that decides whether a URL may become a link or an image.

Rule: only absolute http/https URLs with a host and without credentials.
The decision is made on the URL as a browser would read it (control
characters and whitespace gone, backslashes as slashes) and again after
decoding HTML entities, so `jav&#x09;ascript:`, `&#106;avascript:`,
`java\\tscript:` and zero-width tricks never pass. Other packages (e.g.
app/media for image URLs) call `http_url` too, so there is one rule.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from app.safe_content.ast import MAX_URL_LENGTH

ALLOWED_SCHEMES = frozenset({"http", "https"})

# What browsers drop: C0 controls and space at both ends, tab/newline anywhere.
_EDGE_JUNK = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
# What we also drop before *deciding* the scheme: every control, whitespace
# and invisible format character, so "java\u200bscript:" reads as "javascript:".
_DECISION_JUNK = re.compile(
    r"[\x00-\x20\x7f-\x9f\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]+"
)
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):", re.ASCII)
# Left in a URL these would need escaping or confuse a reader; percent-encode them.
_ENCODE = re.compile(r"[\x00-\x20\x7f-\x9f\"'<>`]")
_BAD_HOST = re.compile(r"[\x00-\x20\x7f-\x9f\s\"'<>`{}|\\^%@/?#]")


def _scheme_of(candidate: str) -> str | None:
    """The scheme a browser could see in `candidate`, lowercased, or None."""
    squashed = _DECISION_JUNK.sub("", unicodedata.normalize("NFKC", candidate)).lower()
    match = _SCHEME.match(squashed)
    return match.group(1) if match else None


def _dangerous(candidate: str) -> bool:
    """True if any reading of `candidate` (raw or entity-decoded) has a non-http scheme."""
    for reading in (candidate, html.unescape(candidate)):
        scheme = _scheme_of(reading)
        if scheme is not None and scheme not in ALLOWED_SCHEMES:
            return True
    return False


def _browser_form(raw: str) -> str:
    """The URL string a browser's URL parser would work on (for http/https)."""
    return _TAB_NEWLINE.sub("", raw.strip(_EDGE_JUNK)).replace("\\", "/")


def _encode(part: str) -> str:
    return _ENCODE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part)


def _checked(parts: SplitResult) -> str | None:
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        return None
    netloc = parts.netloc
    if not netloc or "@" in netloc or _BAD_HOST.search(parts.hostname or "@"):
        return None  # no host, or credentials ("https://bank.example@evil.example/")
    try:
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        return None
    url = urlunsplit(
        (
            parts.scheme.lower(),
            netloc,
            _encode(parts.path),
            _encode(parts.query),
            _encode(parts.fragment),
        )
    )
    return url if len(url) <= MAX_URL_LENGTH else None


@lru_cache(maxsize=2048)  # feeds repeat links; bounded so hostile input cannot bloat it
def http_url(raw: str, base: str | None = None) -> str | None:
    """Return `raw` as a safe absolute http(s) URL, or None if it must not be linked.

    Relative URLs (including protocol-relative "//host/x") are resolved against
    `base` when one is given (and is itself a safe http(s) URL); without a base
    they are refused.
    """
    if not isinstance(raw, str) or len(raw) > MAX_URL_LENGTH or _dangerous(raw):
        return None
    candidate = _browser_form(raw)
    if not candidate:
        return None
    try:
        parts = urlsplit(candidate)
        if not parts.scheme:
            base_url = http_url(base) if base else None
            if base_url is None:
                return None
            candidate = urljoin(base_url, candidate)
            if _dangerous(candidate):
                return None
            parts = urlsplit(candidate)
    except ValueError:  # e.g. an invalid IPv6 literal
        return None
    return _checked(parts)


def is_http_url(url: str) -> bool:
    """True if `url` is already a safe absolute http(s) URL as we would write it."""
    return http_url(url) == url
