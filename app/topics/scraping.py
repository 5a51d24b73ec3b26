"""The scrape step: one run of one source, from lease to counted outcomes.

    claim (lease, SKIP LOCKED) -> run row -> fetch -> entries -> process_scraped_article
    -> run row closed, source rescheduled (backoff on failure) -> live notice

Feeds: a conditional GET with the stored ETag/Last-Modified (304 ends the
run as `not_modified`), feedparser on the bytes egress fetched, and the
article itself fetched through extraction when the feed carries only a
summary. arXiv: the API's Atom answer, then each paper's HTML rendering
for its sections (404: the paper has none). Every entry, whatever its
kind, ends in `process_scraped_article` with the topic.

Entries are processed one after another: the per-host budgets in egress
pace the requests anyway (arXiv: one every three seconds), and a run's
counters then read in the order things happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections import Counter

from app.articles.extraction import Extracted, ExtractionError, extract, failure_of
from app.articles.services import process_scraped_article
from app.articles.types import ArxivSection, OutcomeKind, ScrapedArticle, Source, Warning
from app.core.i18n import _
from app.egress import EgressError, HttpStatusError, RateLimited, egress
from app.safe_content import Document, to_text
from app.topics import services
from app.topics.arxiv import (
    ArxivApiError,
    ArxivEndpoints,
    ArxivEntry,
    arxiv_article,
    parse_api,
    parse_sections,
    query_url,
)
from app.topics.feeds import (
    FeedEntry,
    NotAFeed,
    ParsedFeed,
    entry_document,
    entry_metadata,
    feed_article,
    needs_full_text,
    parse_feed,
)
from app.topics.types import LeasedSource, RunResult, RunStatus, SourceKind

log = logging.getLogger(__name__)

FEED_ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+xml;q=0.9, "
    "application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5"
)
FEED_MAX_BYTES = 5_000_000
# arXiv allows one request every three seconds: a run waits its turn rather
# than fail when another worker is using the budget.
ARXIV_BUDGET_WAIT = 90.0


async def scrape_source(
    workspace_id: int, source_id: int, *, arxiv: ArxivEndpoints | None = None
) -> int | None:
    """Run a due source once; the run's id, or None if it was not due or someone else has it."""
    source = await services.claim_source(workspace_id, source_id)
    if source is None:
        return None
    run_id = await services.start_run(source)
    try:
        result = await run(source, arxiv or ArxivEndpoints())
    except asyncio.CancelledError:
        # The job was stopped (shutdown, timeout): the run says so, the lease is freed.
        interrupted = RunResult(RunStatus.FAILED, error=_("The run was interrupted."))
        await asyncio.shield(services.finish_run(source, run_id, interrupted))
        raise
    except Exception:
        # A bug must not leave the source leased and the run `running`.
        log.exception("topic source %s: the run failed unexpectedly", source.id)
        result = RunResult(RunStatus.FAILED, error=_("The run failed on an unexpected error."))
    await services.finish_run(source, run_id, result, jitter=random.uniform(-1, 1))
    return run_id


async def run(source: LeasedSource, arxiv: ArxivEndpoints) -> RunResult:
    if source.kind == SourceKind.FEED:
        return await _run_feed(source)
    return await _run_arxiv(source, arxiv)


def _fetch_failed(error: EgressError) -> RunResult:
    """The source itself could not be read: the run fails, saying why as extraction would."""
    retry_after = error.retry_after if isinstance(error, RateLimited) else None
    return RunResult(
        RunStatus.FAILED, error=failure_of(error.url, error).reason, retry_after=retry_after
    )


class _Tally:
    """Outcomes of a run's entries, and the last reason one failed."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.last_error = ""

    def count(self, kind: OutcomeKind, reason: str = "") -> None:
        if kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS:
            kind = OutcomeKind.DUPLICATE
        self.counts[kind.value] += 1
        if kind == OutcomeKind.FAILED:
            self.last_error = reason

    def result(self, found: int, *, etag: str = "", last_modified: str = "") -> RunResult:
        failures = self.counts[OutcomeKind.FAILED.value]
        if failures:
            # Forget the feed's validators: the next run must see the entries
            # again (and retry the failed ones), not get a 304.
            etag = last_modified = ""
        return RunResult(
            RunStatus.OK,
            found=found,
            new=self.counts[OutcomeKind.NEW.value],
            duplicates=self.counts[OutcomeKind.DUPLICATE.value],
            failures=failures,
            error=self.last_error,
            etag=etag,
            last_modified=last_modified,
        )


async def _store(tally: _Tally, workspace_id: int, event: ScrapedArticle) -> None:
    outcome = await process_scraped_article(workspace_id, event)
    tally.count(outcome.kind, outcome.reason)


# Feeds ---------------------------------------------------------------------------------


async def _run_feed(source: LeasedSource) -> RunResult:
    headers = {"Accept": FEED_ACCEPT}
    if source.etag:
        headers["If-None-Match"] = source.etag
    if source.last_modified:
        headers["If-Modified-Since"] = source.last_modified
    try:
        fetched = await egress().fetch(
            source.url, headers=headers, accept_statuses=frozenset({304}), max_bytes=FEED_MAX_BYTES
        )
    except EgressError as error:
        return _fetch_failed(error)
    etag = fetched.headers.get("etag", "")
    last_modified = fetched.headers.get("last-modified", "")
    if fetched.status == 304:
        return RunResult(
            RunStatus.NOT_MODIFIED, etag=etag or None, last_modified=last_modified or None
        )
    try:
        feed = await asyncio.to_thread(
            parse_feed,
            fetched.content,
            url=fetched.url,
            content_type=fetched.headers.get("content-type"),
        )
    except NotAFeed:
        return RunResult(
            RunStatus.FAILED, error=_("This address does not serve an RSS or Atom feed.")
        )
    tally = _Tally()
    for _skipped in range(feed.without_link):
        tally.count(OutcomeKind.FAILED, _("A feed entry has no link to the article."))
    for entry in feed.entries:
        event, reason = await _feed_event(source, feed, entry)
        if event is None:
            tally.count(OutcomeKind.FAILED, reason)
        else:
            await _store(tally, source.workspace_id, event)
    found = len(feed.entries) + feed.without_link
    return tally.result(found, etag=etag, last_modified=last_modified)


async def _feed_event(
    source: LeasedSource, feed: ParsedFeed, entry: FeedEntry
) -> tuple[ScrapedArticle | None, str]:
    """The entry as an event: the feed's own text, or the article fetched in full."""
    document = await asyncio.to_thread(entry_document, entry)
    if not needs_full_text(entry, document):
        return _from_feed(source, feed, entry, document, "feed"), ""
    try:
        extracted = await extract(entry.link)
    except ExtractionError as error:
        if not _has_text(document):
            return None, error.reason
        # The summary is better than nothing, and says so in its metadata.
        event = _from_feed(source, feed, entry, document, "summary")
        return _with_metadata(event, full_text_error=error.reason), ""
    if Warning.CONSENT_WALL in extracted.warnings and _has_text(document):
        # The wall's text is no article; the feed's summary at least is one.
        event = _from_feed(source, feed, entry, document, "summary")
        return dataclasses.replace(event, warnings=extracted.warnings), ""
    return _from_page(source, feed, entry, extracted), ""


def _has_text(document: Document) -> bool:
    return bool(to_text(document).strip())


def _from_feed(
    source: LeasedSource, feed: ParsedFeed, entry: FeedEntry, document: Document, full_text: str
) -> ScrapedArticle:
    return feed_article(
        entry, feed, content=document, topic_id=source.topic_id, feed_url=source.url,
        full_text=full_text,
    )  # fmt: skip


def _from_page(
    source: LeasedSource, feed: ParsedFeed, entry: FeedEntry, page: Extracted
) -> ScrapedArticle:
    """The fetched article, with what the feed knows better (its title, date and link)."""
    event = page.scraped(
        Source.FEED,
        topic_id=source.topic_id,
        metadata=entry_metadata(entry, source.url, "fetched"),
    )
    return dataclasses.replace(
        event,
        url=entry.link,
        title=entry.title or event.title,
        byline=event.byline or entry.byline,
        site_name=event.site_name or feed.title,
        language=event.language or feed.language,
        published_at=entry.published_at or event.published_at,
        lead_image=event.lead_image or entry.lead_image,
    )


def _with_metadata(event: ScrapedArticle, **extra: str) -> ScrapedArticle:
    return dataclasses.replace(event, metadata={**event.metadata, **extra})


# arXiv ---------------------------------------------------------------------------------


async def _run_arxiv(source: LeasedSource, endpoints: ArxivEndpoints) -> RunResult:
    try:
        fetched = await egress().fetch(
            query_url(endpoints.api_url, source.query),
            headers={"Accept": "application/atom+xml"},
            accept_statuses=frozenset(),
            budget_wait=ARXIV_BUDGET_WAIT,
        )
        entries = await asyncio.to_thread(parse_api, fetched.content)
    except EgressError as error:
        return _fetch_failed(error)
    except ArxivApiError as error:
        return RunResult(
            RunStatus.FAILED, error=_("arXiv refused the query: %(why)s") % {"why": error}
        )
    tally = _Tally()
    for entry in entries:
        sections = await _sections(entry, endpoints)
        event = arxiv_article(entry, sections, topic_id=source.topic_id, query=source.query)
        await _store(tally, source.workspace_id, event)
    return tally.result(len(entries))


async def _sections(entry: ArxivEntry, endpoints: ArxivEndpoints) -> tuple[ArxivSection, ...]:
    """The paper's sections from its HTML rendering; none when it has no rendering."""
    url = endpoints.html_url.format(id=entry.arxiv_id)
    try:
        fetched = await egress().fetch(
            url,
            headers={"Accept": "text/html"},
            accept_statuses=frozenset(),
            budget_wait=ARXIV_BUDGET_WAIT,
        )
    except HttpStatusError as error:
        if error.status != 404:
            log.info("arXiv %s: no HTML rendering (HTTP %s)", entry.arxiv_id, error.status)
        return ()
    except EgressError as error:
        # The abstract and metadata are worth storing without the sections.
        log.info("arXiv %s: HTML rendering not read: %s", entry.arxiv_id, error.message)
        return ()
    return await asyncio.to_thread(parse_sections, fetched.text)
