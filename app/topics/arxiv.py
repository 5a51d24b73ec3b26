"""arXiv: the API's Atom answer and the HTML rendering, read into entries and sections. Pure.

The API (https://info.arxiv.org/help/api/) answers a `search_query` with an
Atom feed: one entry per paper with its versioned id
(http://arxiv.org/abs/2502.01234v2), authors, abstract, a `title="pdf"`
link and `arxiv:` fields. A malformed query is not an HTTP error: the
answer is a feed whose one entry's id is under http://arxiv.org/api/errors.

Papers with LaTeX sources also have an HTML rendering (LaTeXML) at
https://arxiv.org/html/<id>: `section.ltx_section` elements (and
subsections) headed by `h2.ltx_title_section`, paragraphs in `p.ltx_p`,
formulas as `<math alttext="...">`. That is where section text comes from.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import feedparser
import lxml.html
from lxml.etree import ParserError

from app.articles.types import ArxivData, ArxivSection, ScrapedArticle, Source
from app.core.i18n import _
from app.safe_content import from_text, http_url
from app.topics.feeds import moment_of

# Where the API and the renderings live. Tests point the scraper elsewhere
# through `ArxivEndpoints`; these are the real ones.
API_URL = "https://export.arxiv.org/api/query"
HTML_URL = "https://arxiv.org/html/{id}"
MAX_RESULTS = 25  # newest papers asked for per run
MAX_AUTHORS_IN_BYLINE = 5
MAX_SECTIONS = 100
MAX_SECTION_CHARS = 50_000
MAX_SECTIONS_CHARS = 600_000  # all sections of one paper together

_ID = re.compile(r"arxiv\.org/abs/(.+?)/?$")
_VERSION = re.compile(r"v\d+$")
_SECTION_CLASSES = ("ltx_section", "ltx_subsection", "ltx_subsubsection", "ltx_appendix")


@dataclass(frozen=True)
class ArxivEndpoints:
    api_url: str = API_URL
    html_url: str = HTML_URL  # with "{id}" for the versioned arXiv id


class ArxivApiError(ValueError):
    """The API refused the query; the message is arXiv's own."""


@dataclass(frozen=True)
class ArxivEntry:
    arxiv_id: str  # versioned, e.g. "2502.01234v2"
    abs_url: str  # https://arxiv.org/abs/<id without version>: the article's identity
    title: str
    abstract: str
    authors: tuple[str, ...]
    pdf_url: str  # "" when the entry has no PDF link
    published_at: datetime | None
    primary_category: str
    categories: tuple[str, ...]
    comment: str
    journal_ref: str
    doi: str


def query_url(api_url: str, query: str, max_results: int = MAX_RESULTS) -> str:
    """The API request for the newest papers matching `query`."""
    params = {
        "search_query": query,
        "sortBy": "submittedDate",
        "sortOrder": "descending",
        "start": "0",
        "max_results": str(max_results),
    }
    return f"{api_url}?{urlencode(params)}"


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def _https(url: str) -> str:
    return re.sub(r"^http://(export\.)?arxiv\.org/", r"https://\1arxiv.org/", url)


def parse_api(content: bytes) -> list[ArxivEntry]:
    """The entries of an API answer; ArxivApiError when arXiv says the query is wrong."""
    parsed = feedparser.parse(io.BytesIO(content))
    if not parsed.get("version") and not parsed.get("entries"):
        raise ArxivApiError(_("arXiv did not answer with an Atom feed."))
    entries: list[ArxivEntry] = []
    for raw in parsed.get("entries", []):
        raw_id = str(raw.get("id", ""))
        if "/api/errors" in raw_id:
            raise ArxivApiError(_one_line(raw.get("summary")) or _("no reason given"))
        entry = _entry(raw, raw_id)
        if entry is not None:
            entries.append(entry)
    return entries


def _entry(raw: Any, raw_id: str) -> ArxivEntry | None:
    found = _ID.search(raw_id)
    if found is None:
        return None
    arxiv_id = found.group(1)
    abs_url = http_url(f"https://arxiv.org/abs/{_VERSION.sub('', arxiv_id)}")
    if abs_url is None:
        return None
    pdf = next(
        (
            str(link.get("href", ""))
            for link in raw.get("links", [])
            if link.get("title") == "pdf" or link.get("type") == "application/pdf"
        ),
        "",
    )
    return ArxivEntry(
        arxiv_id=arxiv_id,
        abs_url=abs_url,
        title=_one_line(raw.get("title"))[:1000],
        abstract=" ".join(str(raw.get("summary", "")).split()),
        authors=tuple(name for a in raw.get("authors", []) if (name := _one_line(a.get("name")))),
        pdf_url=(http_url(_https(pdf)) or "") if pdf else "",
        published_at=moment_of(raw.get("published_parsed")),
        primary_category=str((raw.get("arxiv_primary_category") or {}).get("term", "")),
        categories=tuple(str(t.get("term", "")) for t in raw.get("tags", []) if t.get("term")),
        comment=_one_line(raw.get("arxiv_comment")),
        journal_ref=_one_line(raw.get("arxiv_journal_ref")),
        doi=_one_line(raw.get("arxiv_doi")),
    )


def parse_sections(html: str) -> tuple[ArxivSection, ...]:
    """The rendering's sections in document order, as heading/text pairs.

    Subsections are pairs of their own; a section's text is its own
    paragraphs, not its subsections'. The bibliography is left out.
    """
    try:
        tree = lxml.html.document_fromstring(html)
    except (ParserError, ValueError):
        return ()
    sections: list[ArxivSection] = []
    total = 0
    for element in tree.iter("section"):
        classes = (element.get("class") or "").split()
        if not any(c in classes for c in _SECTION_CLASSES):
            continue
        heading = next((h for h in element if h.tag in ("h2", "h3", "h4", "h5", "h6")), None)
        title = _one_line(_text(heading)) if heading is not None else ""
        paragraphs = [
            _one_line(_text(p))
            for p in element.iter("p")
            if "ltx_p" in (p.get("class") or "").split() and _nearest_section(p) is element
        ]
        text = "\n\n".join(p for p in paragraphs if p)[:MAX_SECTION_CHARS]
        if not text:
            continue
        total += len(text)
        if total > MAX_SECTIONS_CHARS or len(sections) == MAX_SECTIONS:
            break
        sections.append(ArxivSection(heading=title[:500], text=text))
    return tuple(sections)


def _nearest_section(element: Any) -> Any:
    for ancestor in element.iterancestors("section"):
        classes = (ancestor.get("class") or "").split()
        if any(c in classes for c in _SECTION_CLASSES) or "ltx_bibliography" in classes:
            return ancestor
    return None


def _text(element: Any) -> str:
    """Text of an element, formulas as their TeX (alttext) instead of MathML pieces."""
    parts: list[str] = [element.text or ""]
    for child in element:
        if not isinstance(child.tag, str):
            pass  # a comment
        elif child.tag == "math":
            parts.append(child.get("alttext", ""))
        else:
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def arxiv_article(
    entry: ArxivEntry, sections: tuple[ArxivSection, ...], *, topic_id: int, query: str
) -> ScrapedArticle:
    """The event for one paper: the abstract as content, the rest as arXiv metadata."""
    authors = entry.authors
    byline = ", ".join(authors[:MAX_AUTHORS_IN_BYLINE])
    if len(authors) > MAX_AUTHORS_IN_BYLINE:
        byline += " et al."
    metadata: dict[str, Any] = {
        "arxiv_id": entry.arxiv_id,
        "arxiv_query": query,
        "primary_category": entry.primary_category,
        "categories": list(entry.categories),
    }
    for key, value in (
        ("comment", entry.comment),
        ("journal_ref", entry.journal_ref),
        ("doi", entry.doi),
    ):
        if value:
            metadata[key] = value
    return ScrapedArticle(
        url=entry.abs_url,
        content=from_text(entry.abstract),
        source=Source.ARXIV,
        title=entry.title,
        byline=byline,
        site_name="arXiv",
        published_at=entry.published_at,
        topic_id=topic_id,
        metadata=metadata,
        arxiv=ArxivData(
            arxiv_id=entry.arxiv_id,
            authors=authors,
            pdf_available=bool(entry.pdf_url),
            pdf_url=entry.pdf_url,
            sections=sections,
        ),
    )
