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
counters then read in the order things happened. Entries whose URL is
already an article are counted as duplicates at once, without fetching
their page (or arXiv rendering); the new ones are fetched. The run row
carries its counters as they change, so the topic page shows them live.

The source's lease is short and renewed by a heartbeat (app.core.leases)
while the run goes on; a run that loses it stops before its next entry.
A run with failed entries ends `partial` and comes back within minutes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import random
from collections import Counter

from app.articles import queries as articles
from app.articles.extraction import Extracted, ExtractionError, extract, failure_of
from app.articles.services import UNAVAILABLE as STORE_UNAVAILABLE
from app.articles.services import process_scraped_article, store_unavailable_reason
from app.articles.types import ArxivSection, OutcomeKind, ScrapedArticle, Source, Warning
from app.core import db, leases
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
FINISH_ATTEMPTS = 8  # about a minute of retries: a database restart takes seconds


async def scrape_source(
    workspace_id: int, source_id: int, *, arxiv: ArxivEndpoints | None = None
) -> int | None:
    """Run a due source once; the run's id, or None if it was not due or someone else has it."""
    source = await services.claim_source(workspace_id, source_id)
    if source is None:
        return None
    run_id = await services.start_run(source)
    tally = _Tally(source, run_id)
    renew = functools.partial(services.renew_lease, source)
    async with leases.heartbeat(renew, name=f"topic-source:{source.id}") as lease:
        tally.lease = lease
        try:
            result = await run(source, arxiv or ArxivEndpoints(), tally)
        except asyncio.CancelledError:
            # The job was stopped (shutdown, timeout): the run says so, the lease is freed.
            interrupted = tally.stopped(_("The run was interrupted."))
            await asyncio.shield(services.finish_run(source, run_id, interrupted))
            raise
        except leases.LeaseLost:
            # Another worker may hold the source now: close our run, leave the source alone.
            result = tally.stopped(_("The run was interrupted (its lease ran out)."))
        except Exception:
            # A bug must not leave the source leased and the run `running`.
            log.exception("topic source %s: the run failed unexpectedly", source.id)
            result = tally.stopped(_("The run failed on an unexpected error."))
    await _finish(source, run_id, result)
    return run_id


async def _finish(source: LeasedSource, run_id: int, result: RunResult) -> None:
    """Close the run, retrying while the database is unreachable (a restart takes seconds)."""
    delay = 1.0
    for attempt in range(FINISH_ATTEMPTS):
        try:
            await services.finish_run(source, run_id, result, jitter=random.uniform(-1, 1))
            return
        except STORE_UNAVAILABLE as error:
            if attempt == FINISH_ATTEMPTS - 1:
                # The lease runs out; the scheduler closes the run and runs the source again.
                log.error("topic run %s could not be closed: %r", run_id, error)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)


async def run(source: LeasedSource, arxiv: ArxivEndpoints, tally: _Tally) -> RunResult:
    if source.kind == SourceKind.FEED:
        return await _run_feed(source, tally)
    return await _run_arxiv(source, arxiv, tally)


def _fetch_failed(error: EgressError) -> RunResult:
    """The source itself could not be read: the run fails, saying why as extraction would."""
    retry_after = error.retry_after if isinstance(error, RateLimited) else None
    return RunResult(
        RunStatus.FAILED, error=failure_of(error.url, error).reason, retry_after=retry_after
    )


class _Tally:
    """Outcomes of a run's entries, the last reason one failed, saved to the run row as they come."""

    def __init__(self, source: LeasedSource, run_id: int) -> None:
        self.source = source
        self.run_id = run_id
        self.lease: leases.Lease | None = None
        self.found = 0
        self.counts: Counter[str] = Counter()
        self.last_error = ""

    def check_lease(self) -> None:
        """Before each entry: stop if another worker may hold the source by now."""
        if self.lease is not None:
            self.lease.check()

    async def entries(self, found: int, known: int) -> None:
        """The run's entries are known: `known` of them are stored articles (duplicates)."""
        self.found = found
        self.counts[OutcomeKind.DUPLICATE.value] += known
        await self.save()

    async def count(self, kind: OutcomeKind, reason: str = "", *, save: bool = True) -> None:
        self.add(kind, reason)
        if save:
            await self.save()

    def add(self, kind: OutcomeKind, reason: str = "") -> None:
        if kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS:
            kind = OutcomeKind.DUPLICATE
        self.counts[kind.value] += 1
        if kind == OutcomeKind.FAILED:
            self.last_error = reason

    def after(self, kind: OutcomeKind) -> RunResult:
        """The counters as they will be once an entry with outcome `kind` is counted."""
        saved = (self.counts.copy(), self.last_error)
        self.add(kind)
        try:
            return self.result()
        finally:
            self.counts, self.last_error = saved

    async def save(self) -> None:
        await services.record_progress(self.source, self.run_id, self.result())

    def result(self, *, etag: str = "", last_modified: str = "") -> RunResult:
        failures = self.counts[OutcomeKind.FAILED.value]
        if failures:
            # Forget the feed's validators: the next run must see the entries
            # again (and retry the failed ones), not get a 304.
            etag = last_modified = ""
        return RunResult(
            RunStatus.PARTIAL if failures else RunStatus.OK,
            found=self.found,
            new=self.counts[OutcomeKind.NEW.value],
            duplicates=self.counts[OutcomeKind.DUPLICATE.value],
            failures=failures,
            error=self.last_error,
            etag=etag,
            last_modified=last_modified,
        )

    def stopped(self, error: str) -> RunResult:
        """The run ended early: failed, with the counts it had reached."""
        return dataclasses.replace(self.result(), status=RunStatus.FAILED, error=error)


class _NotStored(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


async def _store(tally: _Tally, workspace_id: int, event: ScrapedArticle) -> None:
    """Store one entry; the run's counters change in the same transaction as the article.

    So a worker killed at any moment leaves a run row whose `new` equals the
    articles it stored.
    """
    try:
        async with db.workspace_tx(workspace_id) as tx:
            outcome = await process_scraped_article(workspace_id, event)
            if outcome.kind == OutcomeKind.FAILED:
                raise _NotStored(outcome.reason)  # nothing was stored: roll back, count apart
            await services.save_counters(tx, tally.source, tally.run_id, tally.after(outcome.kind))
    except _NotStored as failed:
        await tally.count(OutcomeKind.FAILED, failed.reason)
        return
    except STORE_UNAVAILABLE:
        await tally.count(OutcomeKind.FAILED, store_unavailable_reason())
        return
    tally.add(outcome.kind)


async def _known(workspace_id: int, urls: list[str]) -> set[str]:
    """The URLs already stored; none if that cannot be read now (then every entry is fetched)."""
    try:
        return await articles.stored_urls(workspace_id, urls)
    except STORE_UNAVAILABLE as error:
        log.warning("stored URLs not read (%r); fetching every entry", error)
        return set()


# Feeds ---------------------------------------------------------------------------------


async def _run_feed(source: LeasedSource, tally: _Tally) -> RunResult:
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
    known = await _known(source.workspace_id, [entry.link for entry in feed.entries])
    for _skipped in range(feed.without_link):
        await tally.count(OutcomeKind.FAILED, _("A feed entry has no link to the article."),
                          save=False)  # fmt: skip
    await tally.entries(len(feed.entries) + feed.without_link, len(known))
    for entry in feed.entries:
        if entry.link in known:
            continue
        tally.check_lease()
        event, reason = await _feed_event(source, feed, entry)
        if event is None:
            await tally.count(OutcomeKind.FAILED, reason)
        else:
            await _store(tally, source.workspace_id, event)
    return tally.result(etag=etag, last_modified=last_modified)


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


async def _run_arxiv(source: LeasedSource, endpoints: ArxivEndpoints, tally: _Tally) -> RunResult:
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
    known = await _known(source.workspace_id, [entry.abs_url for entry in entries])
    await tally.entries(len(entries), sum(1 for entry in entries if entry.abs_url in known))
    for entry in entries:
        if entry.abs_url in known:
            continue
        tally.check_lease()
        sections = await _sections(entry, endpoints)
        event = arxiv_article(entry, sections, topic_id=source.topic_id, query=source.query)
        await _store(tally, source.workspace_id, event)
    return tally.result()


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
