"""Values of the library that cross a boundary.

`ScrapedArticle` is what every ingestion path hands to
`app.articles.services.process_scraped_article`: a topic scraper, the bulk
importer, the API. Its content is already a safe_content `Document`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from app.safe_content import Document, image_sources


class Source(StrEnum):
    """What brought an article in."""

    MANUAL = "manual"  # one URL saved by a person
    IMPORT = "import"  # a bulk import
    FEED = "feed"  # an RSS/Atom topic source
    ARXIV = "arxiv"  # an arXiv topic source
    API = "api"  # the HTTP API
    WALL = "wall"  # a wall post without a link, saved as itself from what the wall stored


class Warning(StrEnum):
    """Why an article may not be the clean text of the page."""

    CONSENT_WALL = "probable_consent_wall"
    PAYWALL = "probable_paywall"
    PDF = "pdf_link_only"  # a PDF kept as a link with its metadata


@dataclass(frozen=True)
class ArxivSection:
    heading: str
    text: str


@dataclass(frozen=True)
class ArxivData:
    """Supplementary arXiv metadata, stored apart from the article (FR-005)."""

    arxiv_id: str  # e.g. "2401.01234v2"
    authors: tuple[str, ...] = ()
    pdf_available: bool = False
    pdf_url: str = ""
    sections: tuple[ArxivSection, ...] = ()  # ordered heading/text pairs


@dataclass(frozen=True)
class ScrapedArticle:
    """One scraped article on its way into the library (seed 004's event)."""

    url: str  # as found; normalised by the processing path
    content: Document  # the body, already sanitised into our AST
    source: Source
    title: str = ""
    byline: str = ""
    site_name: str = ""
    language: str = ""  # ISO 639-1 when the page says
    published_at: datetime | None = None
    topic_id: int | None = None
    lead_image: str = ""  # remote URL; rendered only through the media proxy
    metadata: dict[str, Any] = field(default_factory=dict)  # JSON-able source metadata
    warnings: tuple[Warning, ...] = ()
    arxiv: ArxivData | None = None
    # True when `language` was already checked against the text's own words (a page reader
    # did it, `extraction.read_html`): processing keeps it instead of reading the words again.
    language_checked: bool = False


class OutcomeKind(StrEnum):
    NEW = "new"  # stored now; analysis queued
    DUPLICATE = "duplicate"  # stored before and analysed; nothing to do
    DUPLICATE_AWAITING_ANALYSIS = "duplicate_awaiting_analysis"  # stored before; analysis re-queued
    FAILED = "failed"  # not stored; `reason` says why
    # Fetched again over a stored article (`process_scraped_article(replacing=)`):
    REPLACED = "replaced"  # its content is the new page's now; analysis re-queued
    UNCHANGED = "unchanged"  # the new page was a consent wall again: the article stays as it was


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    article_id: int | None = None
    reason: str = ""  # for FAILED: a message a person understands

    @property
    def signalled(self) -> bool:
        """Whether an ArticleProcessed signal went out (FR-004)."""
        return self.kind in (
            OutcomeKind.NEW,
            OutcomeKind.DUPLICATE_AWAITING_ANALYSIS,
            OutcomeKind.REPLACED,
        )


# The library's live topics and views ------------------------------------------------

LIBRARY_TOPIC = "articles"  # the library list changed (an article arrived, left, was analysed)


def article_topic(article_id: int) -> str:
    """The live topic of one article's reader page (its analysis panel)."""
    return f"article:{article_id}"


class ArticleNotFound(LookupError):
    """No such article in this workspace (another workspace's article is not found either)."""


class AnalysisState(StrEnum):
    """The library's analysis filter; "pending" includes analyses running now."""

    PENDING = "pending"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"  # not analysed on purpose (a consent wall: app.analysis.services)


class Sort(StrEnum):
    """The library's order. RELEVANCE applies to a search only; the list is by date then."""

    RELEVANCE = "relevance"  # best match first (a search's default)
    NEWEST = "newest"  # the article's own date (published, else saved), newest first
    OLDEST = "oldest"  # the same date, oldest first
    SAVED = "saved"  # when it came into the library, most recent first


@dataclass(frozen=True)
class LibraryFilter:
    """What the library shows: a parsed and checked query string."""

    q: str = ""  # websearch syntax: words, "phrases", -excluded, or
    topic_id: int | None = None
    source: Source | None = None
    state: AnalysisState | None = None
    deleted: bool = False  # the trash instead of the library
    sort: Sort | None = None  # None: RELEVANCE for a search, NEWEST otherwise
    cursor: str = ""  # opaque keyset cursor from the previous page's `next_cursor`
    limit: int = 25

    @property
    def order(self) -> Sort:
        """The order in effect: relevance needs a search to rank by."""
        if self.sort is None or (self.sort == Sort.RELEVANCE and not self.q):
            return Sort.RELEVANCE if self.q else Sort.NEWEST
        return self.sort


@dataclass(frozen=True)
class ArticleRow:
    """One article in the library list."""

    id: int
    url: str
    title: str  # third-party text
    site_name: str  # third-party text
    byline: str  # third-party text
    source: Source
    topic_id: int | None
    topic_name: str  # "" when none
    published_at: datetime | None
    created_at: datetime
    deleted_at: datetime | None
    word_count: int
    warnings: tuple[str, ...]
    analysis_status: str  # an AnalysisStatus value
    snippet: Document  # highlighted search hits (Strong nodes) or the opening words
    language: str = ""  # ISO 639-1 of the content, "" when unknown (the page's `lang`)


@dataclass(frozen=True)
class LibraryPage:
    items: list[ArticleRow]
    next_cursor: str | None  # None on the last page
    library_is_empty: bool  # no live article at all: tells "empty" from "nothing matches"
    # Best match of a search with more results than it ranks: how many of the newest
    # results are ranked (older ones are listed by a date order only). None: all of them.
    ranked_newest: int | None = None


@dataclass(frozen=True)
class SectionView:
    heading: str  # third-party text
    body: Document  # the section's text as rich text (paragraphs kept)


@dataclass(frozen=True)
class ArxivView:
    arxiv_id: str
    authors: tuple[str, ...]  # third-party text
    pdf_available: bool
    pdf_url: str  # http(s) only, "" otherwise
    sections: tuple[SectionView, ...]


@dataclass(frozen=True)
class ArticleView:
    """One article as the reader page and the API show it."""

    id: int
    url: str  # the normalised original URL (http/https)
    source: Source
    title: str  # third-party text
    byline: str  # third-party text
    site_name: str  # third-party text
    language: str
    published_at: datetime | None
    created_at: datetime
    deleted_at: datetime | None
    topic_id: int | None
    topic_name: str
    content: Document
    text: str
    word_count: int
    reading_minutes: int  # from the word count, at 230 words a minute, at least 1
    lead_image: str  # remote URL; shown only through the media proxy
    metadata: dict[str, Any]
    warnings: tuple[str, ...]
    arxiv: ArxivView | None

    @property
    def lead_image_apart(self) -> str:
        """The lead image to show above the text: "" when the text shows it already (a page's
        og:image is most often its first figure)."""
        return "" if self.lead_image in image_sources(self.content) else self.lead_image
