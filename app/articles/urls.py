"""Normalising article URLs and their hash: the library's dedup key (seed 004, FR-001).

Two URLs that a browser would fetch as the same resource, modulo tracking
noise, normalise to the same string; everything else stays apart ("two
different URLs stay two articles"). The rules, in order:

- surrounding whitespace is stripped; empty, over-long, control characters,
  schemes other than http/https, a missing or invalid host are refused with
  `InvalidUrl`, whose message a person can read;
- scheme and host are lower-cased; a non-ASCII host is IDNA-encoded (UTS #46,
  non-transitional, via the `idna` package); one trailing dot is dropped; an
  IPv6 literal is written in its compressed form;
- the default port (80 for http, 443 for https) is dropped, other ports kept;
- user information is kept as written (it is part of what is fetched);
- the fragment is dropped (it never reaches the server);
- an empty path becomes "/"; "." and ".." segments are resolved (RFC 3986
  5.2.4, as every browser does);
- percent-encoding is normalised only where RFC 3986 6.2.2 calls it safe:
  hex digits upper-cased, escapes of unreserved characters (letters, digits,
  "-", ".", "_", "~") decoded; characters a browser would escape (spaces,
  quotes, angle brackets, non-ASCII, ...) are escaped as UTF-8 the way a
  browser does; a lone "%" is left as it is;
- query parameters named in `TRACKING_PARAMETERS` or starting with `utm_`
  (names compared case-insensitively, after decoding) are dropped, and so
  are empty "&&" pieces; every other parameter is kept, in its order, with
  repeats - nothing is sorted or re-encoded beyond the rules above; a query
  left empty loses its "?".
"""

from __future__ import annotations

import hashlib
import ipaddress
from urllib.parse import SplitResult, unquote_plus, urlsplit

import idna

from app.core.i18n import _, format_number

MAX_URL_LENGTH = 4096  # characters; the same cap the rich-text tree puts on link targets

# Click and campaign identifiers that say who shared a link, never what it is.
TRACKING_PARAMETERS: frozenset[str] = frozenset(
    {
        "fbclid",  # Facebook
        "gclid",  # Google Ads
        "dclid",  # Google Display (DoubleClick)
        "gbraid",  # Google Ads, iOS web-to-app
        "wbraid",  # Google Ads, app-to-web
        "msclkid",  # Microsoft Advertising
        "mc_cid",  # Mailchimp campaign
        "mc_eid",  # Mailchimp subscriber
        "igshid",  # Instagram share
        "yclid",  # Yandex
        "twclid",  # X/Twitter Ads
        "_ga",  # Google Analytics cross-domain linker
        "_gl",  # Google Analytics 4 linker
        "ref_src",  # X/Twitter embed source ("twsrc^tfw")
    }
)
TRACKING_PREFIXES: tuple[str, ...] = ("utm_",)

DEFAULT_PORTS = {"http": 80, "https": 443}

_HEX = frozenset("0123456789abcdefABCDEF")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# What a browser escapes in a path and in a query of an http(s) URL (WHATWG URL
# Standard: the path and special-query percent-encode sets), beyond controls,
# space and non-ASCII which are always escaped.
_PATH_ESCAPE = frozenset('"<>`{}')
_QUERY_ESCAPE = frozenset("\"<>'")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


class InvalidUrl(ValueError):
    """A URL the library cannot take; `str(error)` says why, for a person."""


def url_hash(url: str) -> str:
    """SHA-256 hex of the normalised URL: the article's identity in its workspace."""
    return hashlib.sha256(normalize_url(url).encode("utf-8")).hexdigest()


def normalize_url(url: str) -> str:
    """The one spelling of `url` the library stores and hashes; InvalidUrl if unusable."""
    raw = _checked_text(url)
    try:
        parts = urlsplit(raw)
    except ValueError as error:  # e.g. "Invalid IPv6 URL", a netloc that NFKC changes
        raise InvalidUrl(_("The URL is malformed: %(why)s.") % {"why": error}) from None
    try:
        port = parts.port
    except ValueError:
        raise InvalidUrl(_("The URL's port must be a number between 1 and 65535.")) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidUrl(_("The URL must start with http:// or https://."))
    host = _host(parts)
    netloc = _userinfo(parts) + host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        if port == 0:
            raise InvalidUrl(_("The URL's port must be a number between 1 and 65535."))
        netloc += f":{port}"
    path = _remove_dot_segments(_normalize_escapes(parts.path, _PATH_ESCAPE)) or "/"
    if not path.startswith("/"):
        path = "/" + path
    query = _clean_query(parts.query)
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _checked_text(url: object) -> str:
    if not isinstance(url, str) or not url.strip():
        raise InvalidUrl(_("The URL is empty."))
    raw = url.strip()
    if len(raw) > MAX_URL_LENGTH:
        raise InvalidUrl(
            _("The URL is longer than %(max)s characters.") % {"max": format_number(MAX_URL_LENGTH)}
        )
    # urlsplit silently deletes tabs and newlines; a URL carrying any control
    # character was mangled on its way here, so say so instead of guessing.
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise InvalidUrl(_("The URL contains control characters."))
    return raw


def _userinfo(parts: SplitResult) -> str:
    userinfo, at, _rest = parts.netloc.rpartition("@")
    return f"{userinfo}@" if at and userinfo else ""


def _host(parts: SplitResult) -> str:
    hostport = parts.netloc.rpartition("@")[2]
    if hostport.startswith("["):
        return _ipv6(parts.hostname or "")
    host = parts.hostname or ""
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise InvalidUrl(_("The URL has no host name."))
    return _ascii_host(host) if host.isascii() else _idna_host(host)


def _ipv6(host: str) -> str:
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        raise InvalidUrl(_("The URL's IPv6 address is not valid.")) from None
    if address.scope_id:
        raise InvalidUrl(_("The URL's IPv6 address names a network interface."))
    return f"[{address.compressed}]"


def _invalid_host(host: str) -> InvalidUrl:
    return InvalidUrl(_("The URL's host name %(host)r is not valid.") % {"host": host[:100]})


def _ascii_host(host: str) -> str:
    # Underscores are kept although IDNA forbids them: real hosts use them, and
    # refusing such a URL would lose an article for a naming technicality.
    if len(host) > 253 or not set(host) <= _HOST_CHARS:
        raise _invalid_host(host)
    for label in host.split("."):
        if not label or len(label) > 63 or label.startswith("-") or label.endswith("-"):
            raise _invalid_host(host)
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except idna.IDNAError:
                raise _invalid_host(host) from None
    return host


def _idna_host(host: str) -> str:
    try:
        encoded = idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise _invalid_host(host) from None
    return _ascii_host(encoded.lower().rstrip("."))


def _normalize_escapes(component: str, escape: frozenset[str]) -> str:
    """Upper-case escapes, decode escaped unreserved characters, escape what browsers do."""
    out: list[str] = []
    i, n = 0, len(component)
    while i < n:
        char = component[i]
        if char == "%" and i + 2 < n and set(component[i + 1 : i + 3]) <= _HEX:
            decoded = chr(int(component[i + 1 : i + 3], 16))
            out.append(
                decoded if decoded in _UNRESERVED else "%" + component[i + 1 : i + 3].upper()
            )
            i += 3
            continue
        if char == " " or char in escape or not char.isascii():
            out.append("".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass")))
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 on a path whose escaped dots are already decoded."""
    if "." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                kept.append("")
        elif segment == "..":
            if len(kept) > 1:
                kept.pop()
            if last:
                kept.append("")
        else:
            kept.append(segment)
    result = "/".join(kept)
    return result if result.startswith("/") or not path.startswith("/") else "/" + result


def _is_tracking(piece: str) -> bool:
    name = unquote_plus(piece.partition("=")[0]).strip().lower()
    return name in TRACKING_PARAMETERS or name.startswith(TRACKING_PREFIXES)


def _clean_query(query: str) -> str:
    kept = [
        _normalize_escapes(piece, _QUERY_ESCAPE)
        for piece in query.split("&")
        if piece and not _is_tracking(piece)
    ]
    return "&".join(kept)
