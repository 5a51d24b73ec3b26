"""Deciding what a scraped article becomes before anything is written (pure, no I/O).

`prepare` checks an incoming `ScrapedArticle` and derives every stored field:
the normalised URL and its hash, the plain text and word count of the AST,
cleaned third-party strings, JSON for the jsonb columns. A URL that cannot
be normalised, or content without any text, is a `Rejected` with a reason a
person can read; the service turns it into a FAILED outcome without touching
the database.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.analysis import language
from app.analysis.text import first_words, word_count
from app.articles.types import ArxivData, ScrapedArticle, Warning
from app.articles.urls import InvalidUrl, normalize_url, url_hash
from app.core.i18n import _
from app.safe_content import http_url, to_json, to_text

MAX_TITLE = 1000  # characters of title, byline and site name kept
MAX_LANGUAGE = 12


class Rejected(ValueError):
    """The event cannot become an article; `str()` says why, for a person."""


@dataclass(frozen=True)
class PreparedArticle:
    url: str  # normalised
    url_hash: str
    source: str
    title: str
    byline: str
    site_name: str
    language: str
    published_at: datetime | None  # always with a zone
    topic_id: int | None
    content_json: str  # the AST as JSON, for the jsonb column
    text: str
    word_count: int
    lead_image: str  # http(s) only, "" otherwise
    metadata_json: str
    warnings: list[str]
    arxiv: PreparedArxiv | None

    @property
    def subject(self) -> str:
        """What the event log calls this article: its title, else its URL."""
        return self.title or self.url


@dataclass(frozen=True)
class PreparedArxiv:
    arxiv_id: str
    authors_json: str
    pdf_available: bool
    pdf_url: str
    sections_json: str
    section_count: int


def clean(value: str, limit: int | None = None) -> str:
    """One-line third-party text: NUL and surrounding whitespace gone (PostgreSQL refuses NUL)."""
    text = " ".join(value.replace("\x00", "").split())
    return text[:limit] if limit else text


def _json(value: Any) -> str:
    # PostgreSQL's jsonb refuses \u0000 anywhere; strings from feeds may carry it.
    return json.dumps(value, default=str, ensure_ascii=False).replace("\\u0000", "")


def prepare(event: ScrapedArticle) -> PreparedArticle:
    try:
        url = normalize_url(event.url)
    except InvalidUrl as error:
        raise Rejected(str(error)) from None
    text = to_text(event.content).replace("\x00", "").strip()
    pdf_only = Warning.PDF in event.warnings
    # A PDF kept as a link carries its metadata, not its text; anything else
    # without text would be an empty page in the library.
    if not text and not pdf_only:
        raise Rejected(_("The article has no text: the page's content came out empty."))
    return PreparedArticle(
        url=url,
        url_hash=url_hash(url),
        source=str(event.source),
        title=clean(event.title, MAX_TITLE),
        byline=byline_without_site(clean(event.byline, MAX_TITLE), clean(event.site_name), url),
        site_name=clean(event.site_name, MAX_TITLE),
        language=(
            language_tag(event.language)
            if event.language_checked
            else article_language(event.language, text)
        ),
        published_at=_aware(event.published_at),
        topic_id=event.topic_id,
        content_json=to_json(event.content).decode(),
        text=text,
        word_count=word_count(text),
        lead_image=(http_url(event.lead_image) or "") if event.lead_image else "",
        metadata_json=_json(event.metadata),
        warnings=sorted({str(w) for w in event.warnings}),
        arxiv=_prepare_arxiv(event.arxiv) if event.arxiv else None,
    )


# Where a byline lists several names or adds its outlet: "A; B", "A, Site",
# "A | Site", "A (Site)", "A for Site", "A - Site".
_BYLINE_PARTS = re.compile(r"\s*(?:[;,|·/()]|\s[-–—]\s|\bfor\b)\s*", re.IGNORECASE)


def byline_without_site(byline: str, site_name: str, url: str) -> str:
    """The byline without the site's own name (the library shows the site beside it).

    Pages and feeds often credit "Lois Lane; Daily Planet" or just "Daily
    Planet". Parts naming the site (its name or its host) are dropped; a
    byline with no such part is kept exactly as it was.
    """
    names = {_site_key(site_name), _site_key(_host(url))} - {""}
    parts = [p for p in _BYLINE_PARTS.split(byline) if p.strip()]
    kept = [p for p in parts if _site_key(p) not in names]
    return byline if len(kept) == len(parts) else ", ".join(kept)


def _site_key(name: str) -> str:
    """'The Daily Planet', 'Daily Planet staff', 'www.DailyPlanet.com' -> 'dailyplanet'."""
    key = name.casefold().strip()
    key = re.sub(r"^(?:by\s+|the\s+|www\.)+", "", key)
    key = re.sub(r"\s+(?:staff|newsroom|editors|team|desk|redaktion)$", "", key)
    key = re.sub(r"\.(?:com|org|net|co\.uk|[a-z]{2})$", "", key)
    return re.sub(r"[^\w]+", "", key)


def _host(url: str) -> str:
    return url.split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0]


def language_tag(declared: str) -> str:
    """A language as stored: one clean, lower-case line of at most MAX_LANGUAGE characters."""
    return clean(declared, MAX_LANGUAGE).lower()


def article_language(declared: str, text: str) -> str:
    """The content's language: the page's tag, unless its words say another language.

    Search stems an article in this language (migration m0005), so a page
    that declares "en" over German text is still indexed as German - the
    same order of preference as the analyser's (app.analysis.local).
    """
    tag = language_tag(declared)
    detected = language.detect(first_words(text[:40_000], language.SAMPLE_WORDS))
    return detected if detected and detected != language.declared(tag) else tag


def _aware(value: datetime | None) -> datetime | None:
    """Feeds give dates without a zone now and then; those are read as UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _prepare_arxiv(data: ArxivData) -> PreparedArxiv:
    sections = [
        {"heading": clean(s.heading, MAX_TITLE), "text": s.text.replace("\x00", "").strip()}
        for s in data.sections
    ]
    return PreparedArxiv(
        arxiv_id=clean(data.arxiv_id, 64),
        authors_json=_json([clean(a, 300) for a in data.authors if clean(a)]),
        pdf_available=data.pdf_available,
        pdf_url=(http_url(data.pdf_url) or "") if data.pdf_url else "",
        sections_json=_json(sections),
        section_count=len(sections),
    )
