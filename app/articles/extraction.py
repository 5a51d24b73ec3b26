"""Extraction: one URL in, a readable article (or a clear reason why not) out.

`extract(url)` fetches through egress (its redirects, its caps, its
budgets), decides what the response is (fetching.py: HTML, PDF, something
else; the charset as a browser would), runs trafilatura on the HTML string
(never its downloader), turns trafilatura's output into our AST with
`safe_content.from_html`, and classifies the result (consent.py: consent
wall, paywall, error or bot-check page).

What comes back is an `Extracted`, ready to become the `ScrapedArticle` any
ingestion path hands to `process_scraped_article`, or an `ExtractionError`
whose `reason` a person can read in an import row or a topic run.

Never stored as a good article: HTTP errors, error and bot-check pages that
answered 200, pages without readable text. A consent wall is stored, with
`Warning.CONSENT_WALL`, so a person sees it was not the article.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from string import ascii_lowercase, ascii_uppercase
from typing import Any

import trafilatura
from lxml import etree
from lxml.html import HtmlComment, HtmlElement, HtmlEntity, HtmlProcessingInstruction
from trafilatura.htmlprocessing import build_html_output
from trafilatura.settings import Document as TrafilaturaDocument
from trafilatura.utils import HTML_PARSER, load_html

from app.articles.consent import (
    CONSENT_MAX_WORDS,
    PAYWALL_TRUNCATED_WORDS,
    block_page,
    consent_wall,
    count_words,
    paywall,
)
from app.articles.fetching import (
    Kind,
    decode_html,
    filename_of,
    kind_of,
    title_from_filename,
)
from app.articles.page_metadata import page_metadata
from app.articles.processing import article_language
from app.articles.types import ScrapedArticle, Source, Warning
from app.core.i18n import _
from app.egress import (
    EgressBlocked,
    EgressConnectError,
    EgressError,
    EgressProtocolError,
    EgressTimeout,
    EgressTooLarge,
    HttpStatusError,
    RateLimited,
    egress,
)
from app.safe_content import (
    Document,
    Heading,
    Link,
    Paragraph,
    Text,
    from_html,
    from_text,
    http_url,
    to_text,
)

# Fewer readable words than this is not an article (block pages, empty shells).
MIN_WORDS = 30
# Extracted text shorter than this is judged together with the page's visible text.
SHORT_TEXT_WORDS = 20
# The largest HTML page we read; articles are far smaller, pages full of
# inline data are not worth more.
HTML_MAX_BYTES = 5_000_000
# Bytes read before deciding what a response is.
SNIFF_BYTES = 1024
ACCEPT = "text/html,application/xhtml+xml;q=0.9,application/pdf;q=0.8,*/*;q=0.5"
# Consent text kept when a wall is stored: enough to show what the page said.
MAX_WALL_CHARS = 4000
EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)  # publication dates before this are broken
# No guessing from "© 2025" footers: a wrong date is worse than none.
DATE_PARAMS = {"extensive_search": False, "original_date": True}


def plain_elements() -> None:
    """Parse pages into plain HtmlElements, their class chosen in C (the page readers call
    this as they start): lxml.html's own lookup calls back into Python for each element it
    hands out - to give forms and inputs classes of their own, which nothing here uses -
    ~1,400 calls a news page, a twentieth of reading it. Every field read from 710 bench
    and real pages was the same either way (docs/decisions/imports.md, pass eight)."""
    HTML_PARSER.set_element_class_lookup(
        etree.ElementDefaultClassLookup(
            element=HtmlElement,
            comment=HtmlComment,
            pi=HtmlProcessingInstruction,
            entity=HtmlEntity,
        )
    )


class Failure(StrEnum):
    """Why a URL gave no article; callers branch on it (retry or not)."""

    INVALID_URL = "invalid_url"
    BLOCKED = "blocked"  # egress refused it (private address, port, too many redirects)
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    BROKEN = "broken"  # the server's answer was not valid HTTP
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    HTTP_STATUS = "http_status"
    UNSUPPORTED_TYPE = "unsupported_type"
    ERROR_PAGE = "error_page"  # an error or bot-check page that answered 200
    NO_TEXT = "no_text"
    UNREADABLE = "unreadable"  # reading the page stopped its reader process (app.articles.reading)


# Worth trying again later: the next attempt may well succeed.
RETRYABLE = frozenset({Failure.TIMEOUT, Failure.UNREACHABLE, Failure.BROKEN, Failure.RATE_LIMITED})


class ExtractionError(Exception):
    """No article at `url`; `reason` is for people, `failure` for code."""

    def __init__(
        self,
        url: str,
        failure: Failure,
        reason: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{reason} ({url})")
        self.url = url
        self.failure = failure
        self.reason = reason
        self.status = status  # the HTTP status, for HTTP_STATUS
        self.retry_after = retry_after  # seconds, for RATE_LIMITED when the site said

    def __reduce__(self) -> tuple[Any, ...]:
        """Raised in a reading process, re-raised in the worker: rebuilt from its fields."""
        return (_rebuilt, (self.url, self.failure, self.reason, self.status, self.retry_after))

    @property
    def retryable(self) -> bool:
        if self.failure == Failure.HTTP_STATUS:
            return self.status is not None and (self.status >= 500 or self.status == 408)
        return self.failure in RETRYABLE


def _rebuilt(
    url: str, failure: Failure, reason: str, status: int | None, retry_after: float | None
) -> ExtractionError:
    return ExtractionError(url, failure, reason, status=status, retry_after=retry_after)


@dataclass(frozen=True)
class Extracted:
    """A readable article (or a flagged wall) found at `url`."""

    url: str  # as asked for: the article's identity in the library
    final_url: str  # after redirects; relative links were resolved against it
    content: Document
    title: str = ""
    byline: str = ""
    site_name: str = ""
    language: str = ""  # ISO 639-1, when the page says
    published_at: datetime | None = None
    lead_image: str = ""  # absolute http(s) URL; shown only through the media proxy
    warnings: tuple[Warning, ...] = ()
    word_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)  # JSON-able: how it was read

    def scraped(
        self, source: Source, *, topic_id: int | None = None, metadata: dict[str, Any] | None = None
    ) -> ScrapedArticle:
        """The event for `process_scraped_article`; `metadata` adds to what extraction kept."""
        return ScrapedArticle(
            url=self.url,
            content=self.content,
            source=source,
            title=self.title,
            byline=self.byline,
            site_name=self.site_name,
            language=self.language,
            published_at=self.published_at,
            topic_id=topic_id,
            lead_image=self.lead_image,
            metadata={**self.metadata, **(metadata or {})},
            warnings=self.warnings,
            language_checked=True,  # read_html read it from the text (pdf_link has none)
        )


async def extract(url: str, *, max_bytes: int = HTML_MAX_BYTES) -> Extracted:
    """Fetch `url` through egress and read it; raises ExtractionError with a reason."""
    if http_url(url) is None:
        raise ExtractionError(
            url, Failure.INVALID_URL, _("This is not a web address (http or https).")
        )
    try:
        async with egress().stream(
            url, headers={"Accept": ACCEPT}, accept_statuses=frozenset(), max_bytes=max_bytes
        ) as response:
            head = await _read_at_least(response.body, SNIFF_BYTES)
            kind = kind_of(response.media_type, head)
            if kind == Kind.PDF:
                # The body is not read: a PDF is kept as a link.
                return pdf_link(url, response.url, response.headers.get("content-disposition"))
            if kind == Kind.OTHER:
                raise ExtractionError(
                    url,
                    Failure.UNSUPPORTED_TYPE,
                    _("This address serves %(type)s, not a web page or a PDF.")
                    % {"type": response.media_type or _("an unknown kind of file")},
                )
            body = head + b"".join([chunk async for chunk in response.body])
            final_url = response.url
            charset = _declared_charset(response.headers.get("content-type", ""))
            content_language = response.headers.get("content-language", "")
    except EgressError as error:
        raise failure_of(url, error) from error
    # trafilatura and the sanitiser are CPU work: done in a reading process.
    from app.articles.reading import read_page  # it imports this module

    return await read_page(
        body, url=url, final_url=final_url, charset=charset, content_language=content_language
    )


async def _read_at_least(body: AsyncIterator[bytes], size: int) -> bytes:
    head = b""
    async for chunk in body:
        head += chunk
        if len(head) >= size:
            break
    return head


def _declared_charset(content_type: str) -> str | None:
    found = re.search(r"""charset\s*=\s*["']?([^"';\s]+)""", content_type, re.I)
    return found.group(1) if found else None


def failure_of(url: str, error: EgressError) -> ExtractionError:
    """An egress error as a reason a person understands (feeds and imports say it the same way)."""
    if isinstance(error, HttpStatusError):
        status = error.status
        if status in (404, 410):
            reason = _("The page was not found (HTTP %(status)s).")
        elif status in (401, 403):
            reason = _("The site refused access to the page (HTTP %(status)s).")
        elif status >= 500:
            reason = _("The site had an error (HTTP %(status)s); try again later.")
        else:
            reason = _("The site answered HTTP %(status)s instead of the page.")
        return ExtractionError(url, Failure.HTTP_STATUS, reason % {"status": status}, status=status)
    if isinstance(error, RateLimited):
        reason = _("The site asked us to slow down; it will be tried again later.")
        if error.own_limit_of:  # our own per-host budget, not the site's answer
            reason = _("Waiting for our own limit for %(host)s; it will be tried again later.") % {
                "host": error.own_limit_of
            }
        return ExtractionError(url, Failure.RATE_LIMITED, reason, retry_after=error.retry_after)
    kinds: list[tuple[type[EgressError], Failure, str]] = [
        (EgressBlocked, Failure.BLOCKED, _("This address cannot be fetched: %(detail)s.")),
        (EgressTimeout, Failure.TIMEOUT, _("The site took too long to answer.")),
        (EgressTooLarge, Failure.TOO_LARGE, _("The page is too large to read.")),
        (EgressConnectError, Failure.UNREACHABLE, _("The site could not be reached.")),
        (EgressProtocolError, Failure.BROKEN, _("The site sent a broken answer.")),
    ]
    for kind, failure, reason in kinds:
        if isinstance(error, kind):
            return ExtractionError(url, failure, reason % {"detail": error.message})
    return ExtractionError(url, Failure.UNREACHABLE, _("The site could not be reached."))


# PDF -----------------------------------------------------------------------


def pdf_link(url: str, final_url: str, content_disposition: str | None) -> Extracted:
    """A PDF kept as a link with what its headers and URL say about it."""
    name = filename_of(content_disposition, final_url)
    title = title_from_filename(name) or final_url
    content = Document(
        children=(
            Paragraph(
                children=(
                    Text(_("This article is a PDF document: ")),
                    Link(href=final_url, children=(Text(name or final_url),)),
                )
            ),
        )
    )
    return Extracted(
        url=url,
        final_url=final_url,
        content=content,
        title=title,
        warnings=(Warning.PDF,),
        word_count=0,
        metadata={"content_type": "application/pdf", "final_url": final_url, "filename": name},
    )


# HTML ----------------------------------------------------------------------


def read_html(
    body: bytes,
    *,
    url: str,
    final_url: str,
    charset: str | None = None,
    content_language: str = "",
) -> Extracted:
    """Read an HTML page fetched from `url` (ended at `final_url`). No I/O."""
    decoded = decode_html(body, charset)
    tree = load_html(decoded.text) if decoded.text.strip() else None
    if tree is None:
        raise ExtractionError(url, Failure.NO_TEXT, _("No readable text found on the page."))
    markers = page_markers(tree)
    meta = head_meta(tree)
    as_parsed = not drop_captions(tree)  # nothing else changes the tree
    found, body_html = read_article(tree, final_url)
    site_name = _clean(getattr(found, "sitename", None)) or meta.get("og:site_name", "")
    page_title = without_site_name(meta["<title>"], site_name)
    title = _clean(getattr(found, "title", None)) or meta.get("og:title", "") or page_title
    content = drop_title_heading(from_html(body_html, base_url=final_url), title)
    text = to_text(content)
    word_count = count_words(text)

    # The page's visible text matters only when the extraction is short.
    page_text = ""
    if word_count < max(CONSENT_MAX_WORDS, PAYWALL_TRUNCATED_WORDS):
        page_text = visible_text(tree if as_parsed else None, decoded.text)
    judged, judged_words = (
        (text, word_count) if word_count >= SHORT_TEXT_WORDS else (page_text, None)
    )
    consent = consent_wall(markers, judged, judged_words)
    wall = paywall(decoded.text, markers, page_text, text, word_count)
    blocked = None if consent.wall else block_page(title, judged, word_count)

    metadata: dict[str, Any] = {
        "content_type": "text/html",
        "final_url": final_url,
        "charset": decoded.charset,
        "charset_from": decoded.declared_by,
    }
    if consent.platforms:
        metadata["consent_platforms"] = list(consent.platforms)
    if wall.signals:
        metadata["paywall_signals"] = list(wall.signals)
    if description := _clean(getattr(found, "description", None)):
        metadata["description"] = description[:1000]

    warnings: list[Warning] = []
    if blocked is not None:
        reason = (
            _("The site answered with a 'not found' page instead of the article.")
            if blocked == "not_found"
            else _("The site showed an access check instead of the article.")
        )
        raise ExtractionError(url, Failure.ERROR_PAGE, reason)
    if consent.wall:
        warnings.append(Warning.CONSENT_WALL)
        # The dialog's heading is not the article's title; the page's is closer.
        title = meta.get("og:title", "") or page_title or title
        if word_count < SHORT_TEXT_WORDS:
            content, text = _wall_content(page_text, final_url)
            word_count = count_words(text)
    elif word_count < MIN_WORDS:
        reason = _("No readable text found on the page.")
        if wall.signals:
            reason = _("No readable text found on the page; it seems to be behind a paywall.")
        raise ExtractionError(url, Failure.NO_TEXT, reason)
    if wall.paywall:
        warnings.append(Warning.PAYWALL)

    return Extracted(
        url=url,
        final_url=final_url,
        content=content,
        title=title,
        byline=_clean(getattr(found, "author", None)),
        site_name=site_name,
        # Read from the text here, in the reader, so the worker's processing need not.
        language=article_language(
            language_of(meta.get("<html lang>", ""), meta.get("content-language", ""),
                        content_language, meta.get("og:locale", "")),
            text,
        ),
        published_at=published_at(meta, getattr(found, "date", None)),
        lead_image=http_url(_clean(getattr(found, "image", None)) or meta.get("og:image", ""),
                            final_url) or "",
        warnings=tuple(warnings),
        word_count=word_count,
        metadata=metadata,
    )  # fmt: skip


def read_article(tree: HtmlElement, final_url: str) -> tuple[TrafilaturaDocument | None, str]:
    """trafilatura's metadata and article HTML, or (None, "") for a page it discards."""
    try:
        # The tree as trafilatura's own metadata step saw it: its extraction works on a copy.
        found = page_metadata(tree, final_url, DATE_PARAMS)
    except (TypeError, ValueError):  # what bare_extraction discards a page for
        return None, ""
    extraction = trafilatura.bare_extraction(
        tree,
        url=final_url,
        with_metadata=False,  # page_metadata: the same fields, without categories and tags
        include_comments=False,
        include_links=True,
        include_images=True,
        include_formatting=True,
        include_tables=True,
        # We read `.body` (build_html_output below); "html" spares trafilatura the plain
        # text it would otherwise make of it for `.text` (a tenth of a worker's CPU).
        output_format="html",
    )
    if isinstance(extraction, dict):  # only with the deprecated as_dict
        raise TypeError("trafilatura returned a dict")
    if extraction is None:
        return None, ""
    return found, build_html_output(extraction) if extraction.body is not None else ""


def visible_text(tree: HtmlElement | None, html: str) -> str:
    """`trafilatura.html2txt(html)`, from `tree` when it is still `load_html(html)`:
    parsing the page again cost more than the rest of it."""
    if tree is None:
        return trafilatura.html2txt(html) or ""
    # html2txt reads a page without a <body> as no text, an element as the text of it.
    return (trafilatura.html2txt(tree) or "") if tree.find(".//body") is not None else ""


def _wall_content(page_text: str, final_url: str) -> tuple[Document, str]:
    """What a wall showed, when trafilatura found nothing: its own words, and the link."""
    text = page_text.strip()[:MAX_WALL_CHARS]
    doc = from_text(text) if text else Document()
    note = Paragraph(
        children=(
            Text(_("The site showed a cookie consent wall instead of the article: ")),
            Link(href=final_url, children=(Text(final_url),)),
        )
    )
    return Document(children=(note, *doc.children)), text


_TITLE_SEPARATORS = (" | ", " - ", " – ", " — ", " · ", " :: ", " // ")


def without_site_name(title: str, site_name: str) -> str:
    """A page's <title> without the site's name its pages append or prepend
    ("Stadtrat beschließt ... | Rheinische Rundschau"): the site is shown beside the title."""
    name = site_name.casefold()
    if not name:
        return title
    for separator in _TITLE_SEPARATORS:
        head, _sep, tail = title.rpartition(separator)
        if head and tail.casefold() == name:
            return head
        head, _sep, tail = title.partition(separator)
        if tail and head.casefold() == name:
            return tail
    return title


def _clean(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def drop_title_heading(doc: Document, title: str) -> Document:
    """Without a first heading that only repeats the title (the reader shows the title)."""
    if doc.children and title:
        first = doc.children[0]
        if isinstance(first, Heading) and _squash(to_text(Document(children=(first,)))) == _squash(
            title
        ):
            return Document(children=doc.children[1:], version=doc.version)
    return doc


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


# Captions ----------------------------------------------------------------------

# A class token with one of these in it marks an image's caption or credit.
_CAPTION_CLASSES = ("caption", "credit")
MAX_CAPTION_CHARS = 600  # longer is not a caption but a wrapper that happens to say so
_IMAGE_TAGS = frozenset({"img", "picture"})
# Every element _is_caption may accept, found in C (a Python test of every element of a
# 100 KB page cost more than the rest of drop_captions); _is_caption still decides.
# The class test is on the attribute, then its element (`..`): `*[@class][...]` makes
# libxml2 evaluate a node-set per element, twice the cost.
_CAPTION_CANDIDATES = etree.XPath(
    "descendant-or-self::figcaption | descendant-or-self::p[ancestor::figure]"
    " | descendant-or-self::*/@class["
    + " or ".join(
        f"contains(translate(., '{ascii_uppercase}', '{ascii_lowercase}'), '{name}')"
        for name in _CAPTION_CLASSES
    )
    + "]/.."
)


def drop_captions(tree: HtmlElement) -> bool:
    """Take image captions and credits out of the page before trafilatura reads it;
    whether the tree changed.

    They describe a picture, not the story: kept, they would run into the
    stored text that search, excerpts and analysis read. An image without
    alt text gets its caption as alt, so the reader still says what it shows.
    """
    captions = [
        element
        for element in _CAPTION_CANDIDATES(tree)
        if _is_caption(element) and not _has_image(element)
    ]
    changed = False
    for caption in captions:
        if caption.getparent() is None or len(caption.text_content()) > MAX_CAPTION_CHARS:
            continue
        _alt_from_caption(caption)
        caption.drop_tree()  # keeps the text after it (its tail)
        changed = True
    return changed


def _is_caption(element: HtmlElement) -> bool:
    if element.tag == "figcaption" or _caption_class(element.get("class", "")):
        return True
    return element.tag == "p" and _in_figure_with_image(element)


def _has_image(element: HtmlElement) -> bool:
    return element.tag in _IMAGE_TAGS or any(True for _ in element.iter("img"))


def _caption_class(value: str) -> bool:
    return any(name in token for token in value.lower().split() for name in _CAPTION_CLASSES)


def _in_figure_with_image(element: HtmlElement) -> bool:
    figure = next(element.iterancestors("figure"), None)
    return figure is not None and _has_image(figure)


def _alt_from_caption(caption: HtmlElement) -> None:
    holder = next(caption.iterancestors("figure"), None)
    if holder is None:
        holder = caption.getparent()
    image = next(holder.iter("img"), None) if holder is not None else None
    if image is not None and not (image.get("alt") or "").strip():
        image.set("alt", _clean(caption.text_content())[:300])


# Reading the page's head and markers -----------------------------------------

MAX_MARKERS = 5000  # attribute values looked at per page; a hostile page has millions
# In C: a Python loop over every element of a 100 KB page cost about a sixth of parsing it.
# Name tests, not `*[self::script or ...]`: libxml2 evaluates such a predicate as a node-set
# per element, 1.6 of the 2.1 ms this path took on a 100 KB page (0.3 ms now).
_MARKER_TAG = "(descendant-or-self::script | descendant-or-self::iframe | descendant-or-self::link)"
_MARKERS = etree.XPath(
    "descendant-or-self::*/@id[. != ''] | descendant-or-self::*/@class[. != '']"
    f" | {_MARKER_TAG}/@src[. != ''] | {_MARKER_TAG}[not(@src != '')]/@href[. != '']",
    smart_strings=False,  # plain strings, no link back to the tree
)


def page_markers(tree: HtmlElement) -> list[str]:
    """Ids, class names and script/iframe/link sources (a link's href where it has no src),
    the first MAX_MARKERS in document order: where consent platforms and paywalls show."""
    markers: list[str] = _MARKERS(tree)[:MAX_MARKERS]
    return markers


_META_KEYS = frozenset(
    {
        "og:title",
        "og:site_name",
        "og:image",
        "og:locale",
        "content-language",
        "article:published_time",
        "og:article:published_time",
        "datepublished",
        "date",
        "dc.date",
        "dc.date.issued",
        "dcterms.created",
        "publish-date",
        "pubdate",
    }
)


def head_meta(tree: HtmlElement) -> dict[str, str]:
    """The <meta> values extraction reads itself, plus the <title> and <html lang>."""
    meta: dict[str, str] = {"<title>": "", "<html lang>": ""}
    root = tree.getroottree().getroot()
    meta["<html lang>"] = (root.get("lang") or root.get("xml:lang") or "").strip()
    title = tree.find(".//title")
    if title is not None:
        meta["<title>"] = _clean(title.text_content())
    for element in tree.iter("meta"):
        key = (
            (
                element.get("property")
                or element.get("name")
                or element.get("http-equiv")
                or element.get("itemprop")
                or ""
            )
            .strip()
            .lower()
        )
        if key in _META_KEYS and key not in meta:
            meta[key] = _clean(element.get("content"))
    return meta


_LANGUAGE = re.compile(r"^([A-Za-z]{2})(?:$|[-_])")


def language_of(*candidates: str) -> str:
    """The first ISO 639-1 code among `<html lang>`, Content-Language, og:locale..."""
    for candidate in candidates:
        found = _LANGUAGE.match(candidate.strip().split(",")[0].strip())
        if found:
            return found.group(1).lower()
    return ""


_PUBLISHED_KEYS = (
    "article:published_time",
    "og:article:published_time",
    "datepublished",
    "dc.date.issued",
    "dcterms.created",
    "dc.date",
    "publish-date",
    "pubdate",
    "date",
)


def published_at(meta: dict[str, str], fallback: object) -> datetime | None:
    """The publication time: a precise meta value, else trafilatura's date at midnight UTC."""
    for key in _PUBLISHED_KEYS:
        moment = _parse_moment(meta.get(key, ""))
        if moment is not None:
            return moment
    return _parse_moment(fallback if isinstance(fallback, str) else "")


def _parse_moment(value: str) -> datetime | None:
    value = value.strip()
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # A date far in the future or before the web is a broken page, not news.
    if not EARLIEST <= moment <= datetime.now(UTC) + timedelta(days=2):
        return None
    return moment
