"""Reading a pasted list of URLs: pure, so the page's live counter and the job agree.

One URL per line, and also separated by commas, spaces or tabs (Windows
newlines too). A URL may be wrapped in `<...>` or brackets or quotes, and
trailing punctuation from a sentence is dropped ("see https://x.org/a.").
Words without a dot, a slash or a scheme ("Read:", "and") are prose around
the links, not entries. Everything else is an entry: valid if it is an
http/https URL the library can take, invalid otherwise (with the reason).
Duplicates are decided on the normalised URL (app.articles.urls), so
`https://Example.org/a?utm_source=x` repeats `https://example.org/a`; the
first occurrence is kept, in input order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.articles.urls import InvalidUrl, normalize_url
from app.core.i18n import _, format_number

DEFAULT_MAX_URLS = 5000

# Whitespace always; a comma only between links (a query string may hold commas).
_SEPARATORS = re.compile(r"\s+|,(?=\s|$|https?://)")
# Wrappers people (and mail clients) put around links, and sentence punctuation.
_OPENERS = "<([{\"'«“‘"
_QUOTES_AFTER = ">\"'»”’"
_TRAILING = ".,;:!?…"
_BRACKETS = {")": "(", "]": "[", "}": "{"}
# A scheme and something after it ("mailto:a@b.org", "javascript:..."): an entry, however
# little it looks like a link - not a port ("example.org:8080/a"), not a label ("Read:").
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:(?![0-9]|$)", re.IGNORECASE)


@dataclass(frozen=True)
class InvalidEntry:
    text: str  # the entry as found, cut to 200 characters
    reason: str  # for a person


@dataclass(frozen=True)
class ParsedUrls:
    valid: tuple[str, ...]  # first occurrences, in input order, as given (cleaned)
    invalid: tuple[InvalidEntry, ...]
    duplicates: tuple[str, ...]  # later occurrences of a valid URL
    max_urls: int = DEFAULT_MAX_URLS

    @property
    def too_many(self) -> bool:
        return len(self.valid) > self.max_urls

    @property
    def problem(self) -> str | None:
        """Why no job can be made from this list, or None."""
        if not self.valid:
            return _("Paste at least one web address (http:// or https://).")
        if self.too_many:
            return _(
                "One import takes at most %(max)s URLs; this list has %(n)s. "
                "Split it into several imports."
            ) % {"max": format_number(self.max_urls), "n": format_number(len(self.valid))}
        return None


def _unwrap(token: str) -> str:
    """Strip wrappers and sentence punctuation around a link."""
    previous = None
    while token and token != previous:
        previous = token
        token = token.rstrip(_TRAILING).lstrip(_OPENERS)
        last = token[-1:]
        if last and last in _QUOTES_AFTER:
            token = token[:-1]
        elif last in _BRACKETS and token.count(_BRACKETS[last]) < token.count(last):
            # Kept only when the URL opened it: .../wiki/Mercury_(planet)
            token = token[:-1]
    return token


def _looks_like_prose(token: str) -> bool:
    return "." not in token and "/" not in token


def parse_urls(raw: str, *, max_urls: int = DEFAULT_MAX_URLS) -> ParsedUrls:
    valid: list[str] = []
    invalid: list[InvalidEntry] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    for piece in _SEPARATORS.split(raw):
        token = _unwrap(piece)
        schemed = _SCHEME.match(token) is not None
        if not token or (not schemed and _looks_like_prose(token)):
            continue
        try:
            key = normalize_url(token)
        except InvalidUrl as error:
            reason = str(error)
            if not schemed:
                reason = _("Add https:// in front: only web addresses can be imported.")
            invalid.append(InvalidEntry(token[:200], reason))
            continue
        if key in seen:
            duplicates.append(token)
        else:
            seen.add(key)
            valid.append(token)
    return ParsedUrls(tuple(valid), tuple(invalid), tuple(duplicates), max_urls)
