"""Reading a pasted list of URLs: pure, so the page's live counter and the job agree.

One URL per line, and also separated by commas, spaces or tabs (Windows
newlines too). A URL may be wrapped in `<...>` or brackets or quotes, and
trailing punctuation from a sentence is dropped ("see https://x.org/a.").

An entry is what was meant as a web address: it has a scheme ("https://...",
"htp://x", "mailto:..."), a "//", or it is a host name with a path
("example.com/page") or beginning with "www." ("www.example.com"). An entry
is valid if it is an http/https URL the library can take, invalid otherwise
(with the reason; a URL without its scheme is not guessed: "Add https://").
Everything else is prose around the links ("see", "and", "3.5", "e.g.",
"and/or", "README.md", a mail's greeting): not an entry, only counted in
`words` (tokens holding a letter; list markers and numbers are layout), so a
pasted mail cannot drown a real mistake among hundreds of "invalid" words.
A list a program sent (the API, MCP: `listed=True`) has no prose: there a
word is an invalid entry too. Duplicates are decided on the normalised URL
(app.articles.urls), so `https://Example.org/a?utm_source=x` repeats
`https://example.org/a`; the first occurrence is kept, in input order.
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
# A host name as people write one without its scheme: labels of letters, digits and
# hyphens, a top-level label of two letters or more (or punycode), maybe a port. Not
# "3.5" or "e.g" or "U.S"; an entry only with a path after it or "www." before it, so
# "README.md", "Node.js" and "end.Next" in a mail stay words.
_LABEL = r"[^\W_](?:[\w-]*[^\W_])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)+(?:xn--[a-z0-9-]+|[^\W\d_]{{2,}})(?::[0-9]+)?", re.IGNORECASE)


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
    words: int = 0  # prose left out: words that are not web addresses (never in a list)

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


def _meant_as_address(token: str, listed: bool) -> bool:
    """A token without a scheme that was meant as a web address (see the module's text);
    in a list a program sent, a bare host name ("example.com") was meant as one too."""
    if "//" in token:
        return True
    host = _HOST.match(token)
    if host is None:
        return False
    rest = token[host.end() :]
    if rest:
        return rest[0] in "/?#"
    return listed or token[:4].lower() == "www."


def _is_word(token: str) -> bool:
    return any(c.isalpha() for c in token)


def parse_urls(raw: str, *, max_urls: int = DEFAULT_MAX_URLS, listed: bool = False) -> ParsedUrls:
    """Read pasted text (`listed`: a list a program sent, where every word was meant as
    a URL) into its valid URLs, invalid entries, duplicates and the words left out."""
    valid: list[str] = []
    invalid: list[InvalidEntry] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    words = 0
    for piece in _SEPARATORS.split(raw):
        token = _unwrap(piece)
        if not token:
            continue
        schemed = _SCHEME.match(token) is not None
        if not schemed and not _meant_as_address(token, listed):
            if listed:
                invalid.append(
                    InvalidEntry(token[:200], _("This is not a web address (http or https)."))
                )
            elif _is_word(token):
                words += 1
            continue
        try:
            key = normalize_url(token)
        except InvalidUrl as error:
            reason = str(error)
            if not schemed and "//" not in token:  # "http//x.org/a" lost its colon instead
                reason = _("Add https:// in front: only web addresses can be imported.")
            invalid.append(InvalidEntry(token[:200], reason))
            continue
        if key in seen:
            duplicates.append(token)
        else:
            seen.add(key)
            valid.append(token)
    return ParsedUrls(tuple(valid), tuple(invalid), tuple(duplicates), max_urls, words)
