"""Reading RSS and Atom feeds into entries, and deciding which need their full text. Pure.

feedparser only ever parses bytes egress already fetched, handed over as a
stream: given a `str` that looks like a URL it would fetch it itself, and
given `bytes` it first tries to open them as a local file name.
"""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import feedparser

from app.articles.consent import words
from app.articles.types import ScrapedArticle, Source
from app.safe_content import Document, from_html, from_text, http_url, to_text

MAX_ENTRIES = 50  # entries read per run; a feed's oldest beyond this were seen before
# Feed content shorter than this is a teaser: the article is fetched instead.
FULL_TEXT_MIN_WORDS = 100
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # characters no name holds


class NotAFeed(ValueError):
    """The bytes are not an RSS or Atom feed (often an HTML page at the feed's old address)."""


@dataclass(frozen=True)
class FeedEntry:
    link: str  # absolute http(s) URL of the article
    entry_id: str  # the feed's id/guid, "" if none
    title: str  # plain text
    byline: str
    published_at: datetime | None
    body_html: str  # the fullest text the feed carries: content, else summary/description
    summary_only: bool  # an Atom entry with only <summary>: never the whole article
    lead_image: str  # absolute http(s) URL or ""
    language: str = ""  # the entry's own tag as the feed wrote it (xml:lang, dc:language), or ""


@dataclass(frozen=True)
class ParsedFeed:
    title: str
    language: str  # ISO 639-1 or ""
    entries: tuple[FeedEntry, ...]
    without_link: int  # entries skipped: no usable link to identify them by


def parse_feed(content: bytes, *, url: str, content_type: str | None = None) -> ParsedFeed:
    """Parse a fetched feed body; `url` (its final address) resolves relative links."""
    headers = {"content-location": url}
    if content_type:
        headers["content-type"] = content_type
    parsed = feedparser.parse(io.BytesIO(content), response_headers=headers)
    if not parsed.get("version") and not parsed.get("entries"):
        raise NotAFeed(str(parsed.get("bozo_exception") or "no RSS or Atom elements"))
    atom = str(parsed.get("version", "")).startswith("atom")
    feed = parsed.get("feed", {})
    entries: list[FeedEntry] = []
    without_link = 0
    # feedparser falls back to its loose parser on malformed XML (a stray control
    # character is enough); that one leaves entities in some fields, e.g. the author.
    loose = bool(parsed.get("bozo"))
    for raw in parsed.get("entries", [])[:MAX_ENTRIES]:
        entry = _entry(raw, url, atom, loose=loose)
        if entry is None:
            without_link += 1
        else:
            entries.append(entry)
    return ParsedFeed(
        title=_plain(feed.get("title", ""), feed.get("title_detail")),
        language=_language(feed.get("language", "")),
        entries=tuple(entries),
        without_link=without_link,
    )


def _entry(raw: Any, feed_url: str, atom: bool, *, loose: bool = False) -> FeedEntry | None:
    link = http_url(str(raw.get("link", "")), feed_url)
    if link is None:
        # Some feeds put the permalink only in the guid.
        guid = str(raw.get("id", ""))
        link = http_url(guid) if raw.get("guidislink", False) or guid.startswith("http") else None
    if link is None:
        return None
    contents = [c for c in raw.get("content", []) if str(c.get("value", "")).strip()]
    content_html = max((str(c["value"]) for c in contents), key=len, default="")
    summary_html = str(raw.get("summary", ""))
    return FeedEntry(
        link=link,
        entry_id=str(raw.get("id", ""))[:500],
        title=_plain(raw.get("title", ""), raw.get("title_detail")),
        byline=_byline(raw, loose=loose),
        published_at=moment_of(raw.get("published_parsed") or raw.get("updated_parsed")),
        body_html=content_html or summary_html,
        summary_only=atom and not content_html,
        lead_image=_image(raw, link),
        language=_entry_language(raw),
    )


def _entry_language(raw: Any) -> str:
    """The language an entry's text is marked with: Atom's xml:lang on its content or summary
    (inherited from the entry or feed), an RSS item's dc:language; "" when unmarked."""
    details = [*raw.get("content", []), raw.get("summary_detail") or {}]
    for found in [*(d.get("language") for d in details), raw.get("language")]:
        if isinstance(found, str) and found.strip():
            return found.strip()[:100]
    return ""


def _byline(raw: Any, *, loose: bool) -> str:
    """The author as plain text: the loose parser leaves `Smith &amp; Jones` escaped, once."""
    text = str(raw.get("author", ""))
    if loose:
        text = html.unescape(text)
    return " ".join(_CONTROL.sub(" ", text).split())[:300]


def _plain(value: object, detail: Any) -> str:
    text = str(value or "")
    kind = str((detail or {}).get("type", "")) if isinstance(detail, dict) else ""
    if "html" in kind or "<" in text:
        text = to_text(from_html(text))
    return " ".join(_CONTROL.sub(" ", text).split())[:1000]


def moment_of(parsed: Any) -> datetime | None:
    """A datetime from feedparser's UTC struct_time."""
    try:
        if not parsed:
            return None
        year, month, day, hour, minute, second = (int(v) for v in parsed[:6])
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except (TypeError, ValueError):
        return None


def _language(value: object) -> str:
    code = str(value or "").strip().lower()[:2]
    return code if len(code) == 2 and code.isalpha() else ""


def _image(raw: Any, base: str) -> str:
    candidates: list[str] = [str(t.get("url", "")) for t in raw.get("media_thumbnail", [])]
    candidates += [
        str(m.get("url", ""))
        for m in raw.get("media_content", [])
        if m.get("medium") == "image" or str(m.get("type", "")).startswith("image/")
    ]
    candidates += [
        str(e.get("href", ""))
        for e in raw.get("enclosures", [])
        if str(e.get("type", "")).startswith("image/")
    ]
    for candidate in candidates:
        found = http_url(candidate, base) if candidate else None
        if found:
            return found
    return ""


def entry_document(entry: FeedEntry) -> Document:
    """The entry's text as our AST; relative links resolve against the article's address."""
    if "<" in entry.body_html:
        return from_html(entry.body_html, base_url=entry.link)
    return from_text(entry.body_html)


def needs_full_text(entry: FeedEntry, document: Document) -> bool:
    """Fetch the article itself: the feed carries only a summary, or a short teaser."""
    return entry.summary_only or len(words(to_text(document))) < FULL_TEXT_MIN_WORDS


def feed_article(
    entry: FeedEntry,
    feed: ParsedFeed,
    *,
    content: Document,
    topic_id: int,
    feed_url: str,
    full_text: str,
) -> ScrapedArticle:
    """The event for an entry whose body came from the feed (`full_text` says how complete)."""
    return ScrapedArticle(
        url=entry.link,
        content=content,
        source=Source.FEED,
        title=entry.title,
        byline=entry.byline,
        site_name=feed.title,
        language=_language(entry.language) or feed.language,
        published_at=entry.published_at,
        topic_id=topic_id,
        lead_image=entry.lead_image,
        metadata=entry_metadata(entry, feed_url, full_text),
    )


def entry_metadata(entry: FeedEntry, feed_url: str, full_text: str) -> dict[str, str]:
    """What the library keeps about where a feed article came from."""
    return {"feed_url": feed_url, "entry_id": entry.entry_id, "full_text": full_text}
