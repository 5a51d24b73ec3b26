"""The library's use cases: the one processing path (seed 004), trash and restore.

`process_scraped_article` is where every article ends, whatever brought it
(topic scrapers, the bulk import, the API). In one transaction:

1. INSERT ... ON CONFLICT (workspace_id, url_hash) DO NOTHING RETURNING id -
   the unique constraint decides between concurrent submitters, in any
   number of processes; the loser waits for the winner's commit and then
   reads the row it made (FR-001, SC-001, US2-S2);
2. new: the analysis row is created pending (FR-002); arXiv metadata is
   written in a savepoint whose failure is logged and leaves the article
   (FR-005, non-fatal);
3. existing: a completed analysis makes it a `duplicate` with no signal
   (US2-S1, SC-002); otherwise the analysis is reset to pending - a
   `duplicate_awaiting_analysis` (US3-S1, SC-003);
4. the ArticleProcessed signal - an analysis wake-up (arq, job id per
   article), an `article_processed` event row and live notices - is
   registered in the transaction and sent only after it commits, so a
   failed save never signals (FR-004, FR-006, US1-S3).

The analyser reads the article from PostgreSQL, stored arXiv sections
included, so a re-queued arXiv article carries its sections again (FR-007,
SC-005; app.articles.queries.analysis_input).
"""

from __future__ import annotations

import logging
from datetime import timedelta

import asyncpg

from app.analysis import services as analysis
from app.articles.processing import PreparedArticle, PreparedArxiv, Rejected, prepare
from app.articles.types import (
    LIBRARY_TOPIC,
    ArticleNotFound,
    Outcome,
    OutcomeKind,
    ScrapedArticle,
    Warning,
    article_topic,
)
from app.core import db
from app.core.i18n import _
from app.events.services import record
from app.live.notices import publish_after_commit

log = logging.getLogger(__name__)

EVENT_PROCESSED = "article_processed"
EVENT_DELETED = "article_deleted"
EVENT_RESTORED = "article_restored"
EVENT_PURGED = "article_purged"

# How long the trash keeps an article before `purge_expired_trash` deletes it
# for good (the trash page says so).
TRASH_RETENTION_DAYS = 30

# How long a save waits for a lock before it gives up and reports the store
# unavailable: a stuck migration or a long maintenance lock must not pile up
# every import worker behind it. Module-level so tests can shorten it.
LOCK_TIMEOUT = "5s"

# Errors that mean the store could not take the write now; the submitter may
# simply try again later (SC-004).
UNAVAILABLE: tuple[type[BaseException], ...] = (
    asyncpg.InterfaceError,  # the pool or connection is closed
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # shutdown, query cancelled
    asyncpg.exceptions.InsufficientResourcesError,  # too many connections, disk full
    asyncpg.exceptions.LockNotAvailableError,  # LOCK_TIMEOUT passed
    asyncpg.exceptions.TransactionRollbackError,  # deadlock, serialization
    asyncpg.exceptions.ReadOnlySQLTransactionError,  # a replica / read-only mode
    OSError,
    TimeoutError,
)


def store_unavailable_reason() -> str:
    return _("The article could not be saved: the persistent store is temporarily unavailable.")


async def process_scraped_article(
    workspace_id: int,
    event: ScrapedArticle,
    *,
    wake_analysis: bool = True,
    replacing: int | None = None,
) -> Outcome:
    """Store `event` once per normalised URL and signal analysis when it is needed.

    `wake_analysis=False` leaves the analysis pending without a wake-up: for a
    caller that wakes the due analyses itself when it is done (the import loop).
    `replacing`: the page was fetched again for this stored article (it was a
    consent wall): its content becomes the new page's, same id, unless the new
    page is a consent wall again (UNCHANGED).
    """
    try:
        # On the event loop, not in a thread: a page's reading (the CPU that counts) ran in
        # a reader, and what is left is ~0.5 ms; handed to a thread it waited for the GIL
        # there and back, and every item of an import waited with it (imports.md, pass 11).
        article = prepare(event)
    except Rejected as rejected:
        return Outcome(OutcomeKind.FAILED, reason=str(rejected))
    try:
        if replacing is not None:
            return await _replace(workspace_id, replacing, article, wake_analysis)
        return await _store(workspace_id, article, wake_analysis)
    except UNAVAILABLE as error:
        log.error(
            "article save failed, store unavailable (workspace %s, %s): %s: %s",
            workspace_id,
            article.url,
            type(error).__name__,
            error,
        )
        return Outcome(OutcomeKind.FAILED, reason=store_unavailable_reason())
    except asyncpg.ForeignKeyViolationError as error:
        # Its workspace (or topic) was deleted while the page was read: nothing to save it
        # to, and nothing wrong with us. One line; the caller's claim is gone with it.
        log.warning(
            "article not saved, its workspace %s or topic is gone: %s", workspace_id, article.url
        )
        return _refused(error)
    except asyncpg.PostgresError as error:
        log.exception("article save failed (workspace %s, %s)", workspace_id, article.url)
        return _refused(error)


def _refused(error: asyncpg.PostgresError) -> Outcome:
    return Outcome(
        OutcomeKind.FAILED,
        reason=_("The article could not be saved: the database refused it (%(code)s).")
        % {"code": error.sqlstate or type(error).__name__},
    )


async def _store(workspace_id: int, article: PreparedArticle, wake_analysis: bool) -> Outcome:
    # A row that conflicts but cannot be read was removed in between (its
    # workspace was deleted); one more round settles it either way.
    for _round in range(2):
        async with db.workspace_tx(workspace_id, lock_timeout=LOCK_TIMEOUT) as tx:
            article_id = await _insert(tx, article)
            if article_id is not None:
                await analysis.queue(tx, article_id, wake=wake_analysis)
                if article.arxiv is not None:
                    await _save_arxiv(tx, article_id, article.arxiv, replace=True)
                await _signal(tx, article_id, article, OutcomeKind.NEW)
                return Outcome(OutcomeKind.NEW, article_id)
            existing = await tx.fetchrow(
                "SELECT id, deleted_at FROM articles WHERE workspace_id = $1 AND url_hash = $2",
                workspace_id,
                article.url_hash,
            )
            if existing is not None:
                return await _resubmitted(
                    tx, existing["id"], existing["deleted_at"], article, wake_analysis
                )
    return Outcome(OutcomeKind.FAILED, reason=store_unavailable_reason())


async def _resubmitted(
    tx: db.Tx, article_id: int, deleted_at: object, article: PreparedArticle, wake_analysis: bool
) -> Outcome:
    # A scraper never brings back what a person put in the trash; restoring does.
    if deleted_at is not None or not await analysis.queue(tx, article_id, wake=wake_analysis):
        return Outcome(OutcomeKind.DUPLICATE, article_id)
    if article.arxiv is not None:  # fills in metadata an earlier save could not write
        await _save_arxiv(tx, article_id, article.arxiv, replace=False)
    await _signal(tx, article_id, article, OutcomeKind.DUPLICATE_AWAITING_ANALYSIS)
    return Outcome(OutcomeKind.DUPLICATE_AWAITING_ANALYSIS, article_id)


async def _replace(
    workspace_id: int, article_id: int, article: PreparedArticle, wake_analysis: bool
) -> Outcome:
    """The article's content from a page fetched again; its id, URL, source and topic stay."""
    if Warning.CONSENT_WALL.value in article.warnings:  # the same wall: keep what is stored
        return Outcome(OutcomeKind.UNCHANGED, article_id)
    async with db.workspace_tx(workspace_id, lock_timeout=LOCK_TIMEOUT) as tx:
        replaced = await tx.fetchval(
            """
            UPDATE articles SET title = $3, byline = $4, site_name = $5, language = $6,
              published_at = $7, content = $8::jsonb, text = $9, word_count = $10,
              lead_image = $11, metadata = $12::jsonb, warnings = $13, updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL
            RETURNING id
            """,
            workspace_id,
            article_id,
            article.title,
            article.byline,
            article.site_name,
            article.language,
            article.published_at,
            article.content_json,
            article.text,
            article.word_count,
            article.lead_image,
            article.metadata_json,
            article.warnings,
        )
        if replaced is None:  # trashed or deleted since the fetch was asked for
            return Outcome(OutcomeKind.FAILED, reason=_("The article is no longer in the library."))
        # The analysis was of the wall's text.
        await analysis.queue(tx, article_id, wake=wake_analysis, again=True)
        await _signal(tx, article_id, article, OutcomeKind.REPLACED)
    return Outcome(OutcomeKind.REPLACED, article_id)


async def _insert(tx: db.Tx, a: PreparedArticle) -> int | None:
    return await tx.fetchval(
        """
        INSERT INTO articles (workspace_id, url, url_hash, source, title, byline, site_name,
          language, published_at, topic_id, content, text, word_count, lead_image, metadata,
          warnings)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
          (SELECT id FROM topics WHERE id = $10 AND workspace_id = $1),
          $11::jsonb, $12, $13, $14, $15::jsonb, $16)
        ON CONFLICT (workspace_id, url_hash) DO NOTHING
        RETURNING id
        """,
        tx.workspace_id,
        a.url,
        a.url_hash,
        a.source,
        a.title,
        a.byline,
        a.site_name,
        a.language,
        a.published_at,
        a.topic_id,
        a.content_json,
        a.text,
        a.word_count,
        a.lead_image,
        a.metadata_json,
        a.warnings,
    )


async def _save_arxiv(tx: db.Tx, article_id: int, arxiv: PreparedArxiv, *, replace: bool) -> bool:
    """Write the arXiv metadata in a savepoint; a failure is logged, the article stays."""
    conflict = (
        """DO UPDATE SET arxiv_id = EXCLUDED.arxiv_id, authors = EXCLUDED.authors,
           pdf_available = EXCLUDED.pdf_available, pdf_url = EXCLUDED.pdf_url,
           sections = EXCLUDED.sections, updated_at = now()"""
        if replace
        else "DO NOTHING"
    )
    try:
        async with tx.savepoint():
            await tx.execute(
                f"""
                INSERT INTO arxiv_metadata (workspace_id, article_id, arxiv_id, authors,
                  pdf_available, pdf_url, sections)
                VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7::jsonb)
                ON CONFLICT (workspace_id, article_id) {conflict}
                """,
                tx.workspace_id,
                article_id,
                arxiv.arxiv_id,
                arxiv.authors_json,
                arxiv.pdf_available,
                arxiv.pdf_url,
                arxiv.sections_json,
            )
    except asyncpg.PostgresError as error:
        # Seed 004: missing metadata is tolerable, a lost article is not.
        log.warning(
            "arXiv metadata of article %s not saved (%s: %s); the article is kept",
            article_id,
            type(error).__name__,
            error,
        )
        return False
    return True


async def _signal(tx: db.Tx, article_id: int, article: PreparedArticle, kind: OutcomeKind) -> None:
    """ArticleProcessed: the analysis wake-up is already registered by `analysis.queue`;
    this adds the event row and the live notices. All of it fires only after commit."""
    await record(
        tx,
        EVENT_PROCESSED,
        subject=article.subject,
        article_id=article_id,
        outcome=kind.value,
        url=article.url,
        source=article.source,
        topic_id=article.topic_id,
        arxiv_sections=article.arxiv.section_count if article.arxiv else 0,
    )
    publish_after_commit(tx, LIBRARY_TOPIC)
    if kind != OutcomeKind.NEW:  # no reader page can be open on an article just made
        publish_after_commit(tx, article_topic(article_id))


# Trash ------------------------------------------------------------------------------


async def delete_article(workspace_id: int, article_id: int, *, actor_user_id: int | None) -> bool:
    """Move an article to the trash; False if it was there already. ArticleNotFound if none."""
    return await _set_deleted(workspace_id, article_id, True, actor_user_id)


async def restore_article(workspace_id: int, article_id: int, *, actor_user_id: int | None) -> bool:
    """Bring an article back from the trash (and its analysis, if unfinished, back to a worker)."""
    return await _set_deleted(workspace_id, article_id, False, actor_user_id)


async def _set_deleted(
    workspace_id: int, article_id: int, deleted: bool, actor_user_id: int | None
) -> bool:
    async with db.workspace_tx(workspace_id) as tx:
        row = await tx.fetchrow(
            """
            UPDATE articles SET deleted_at = CASE WHEN $3 THEN now() END, updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND (deleted_at IS NULL) = $3
            RETURNING title, url
            """,
            workspace_id,
            article_id,
            deleted,
        )
        if row is None:
            await _require_article(tx, workspace_id, article_id)
            return False
        if not deleted:
            await analysis.queue(tx, article_id)
        await record(
            tx,
            EVENT_DELETED if deleted else EVENT_RESTORED,
            actor_user_id=actor_user_id,
            subject=row["title"] or row["url"],
            article_id=article_id,
        )
        publish_after_commit(tx, LIBRARY_TOPIC)
        publish_after_commit(tx, article_topic(article_id))
    return True


async def _require_article(tx: db.Tx, workspace_id: int, article_id: int) -> None:
    """ArticleNotFound unless the workspace has this article (in the library or the trash)."""
    exists = await tx.fetchval(
        "SELECT 1 FROM articles WHERE workspace_id = $1 AND id = $2", workspace_id, article_id
    )
    if exists is None:
        raise ArticleNotFound(article_id)


async def purge_article(workspace_id: int, article_id: int, *, actor_user_id: int | None) -> bool:
    """Delete an article in the trash for good (its analysis and arXiv data go with it).

    Only from the trash: an article in the library must be trashed first, so
    one stray click never loses anything. False if it is not in the trash.
    ArticleNotFound if the workspace has no such article.
    """
    async with db.workspace_tx(workspace_id) as tx:
        row = await tx.fetchrow(
            """
            DELETE FROM articles WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NOT NULL
            RETURNING title, url
            """,
            workspace_id,
            article_id,
        )
        if row is None:
            await _require_article(tx, workspace_id, article_id)
            return False
        await record(
            tx,
            EVENT_PURGED,
            actor_user_id=actor_user_id,
            subject=row["title"] or row["url"],
            article_id=article_id,
        )
        publish_after_commit(tx, LIBRARY_TOPIC)
        publish_after_commit(tx, article_topic(article_id))
    return True


async def purge_expired_trash(retention: timedelta = timedelta(days=TRASH_RETENTION_DAYS)) -> int:
    """Delete for good what has been in the trash longer than `retention`; how many.

    Found across workspaces (system work, an unbound connection), deleted one
    workspace at a time in its own transaction, so each workspace's open
    pages hear about their own trash only.
    """
    rows = await db.fetch(
        """
        SELECT workspace_id, array_agg(id) AS ids FROM articles
        WHERE deleted_at < now() - $1::interval GROUP BY workspace_id
        """,
        retention,
    )
    purged = 0
    for row in rows:
        async with db.workspace_tx(row["workspace_id"]) as tx:
            done = await tx.fetchval(
                """
                WITH gone AS (
                  DELETE FROM articles
                  WHERE workspace_id = $1 AND id = ANY($2::bigint[])
                    AND deleted_at < now() - $3::interval
                  RETURNING 1
                ) SELECT count(*) FROM gone
                """,
                row["workspace_id"],
                row["ids"],
                retention,
            )
            if done:
                publish_after_commit(tx, LIBRARY_TOPIC)
        purged += done
    if purged:
        log.info("trash: %d article(s) older than %s deleted for good", purged, retention)
    return purged
