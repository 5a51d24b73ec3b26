"""Thin arq task functions: each takes ids, calls one service, is idempotent."""

from __future__ import annotations

from typing import Any

from app.accounts.housekeeping import forget_expired
from app.analysis import services as analysis
from app.articles import services as article_services
from app.core import config
from app.imports import services as imports
from app.imports import step as import_step
from app.streams import polling as stream_polling
from app.streams import services as streams
from app.topics import scraping
from app.topics import services as topics


async def housekeeping(ctx: dict[str, Any]) -> dict[str, int]:
    return await forget_expired()


async def purge_trash(ctx: dict[str, Any]) -> int:
    """Hourly: delete for good what has been in the trash for 30 days."""
    return await article_services.purge_expired_trash()


DEFERRED = "deferred"


async def analyse_article(ctx: dict[str, Any], workspace_id: int, article_id: int) -> str:
    """ArticleProcessed: analyse one article if its analysis is due (claims it first).

    While any worker process reads import items, the analysis waits, pending in
    PostgreSQL: reading comes first, and the last import loop of a process to
    end wakes the due analyses (`import_items`); the analysis reconciler is the
    backstop.
    """
    if await import_step.reading_anywhere():
        return DEFERRED
    return await analysis.run_analysis(workspace_id, article_id, config.active())


async def reconcile_analyses(ctx: dict[str, Any]) -> int:
    """Wake workers for every analysis PostgreSQL says is due (lost wake-ups, dead workers).

    Not while import items are read: every wake-up would only be deferred, and
    the reading loops wake the due analyses when they end.
    """
    if await import_step.reading_anywhere():
        return 0
    return await analysis.reconcile()


async def scrape_topic_source(ctx: dict[str, Any], workspace_id: int, source_id: int) -> int | None:
    """Run one topic source if it is due and free (claims it with a lease first)."""
    return await scraping.scrape_source(workspace_id, source_id)


async def wake_topic_sources(ctx: dict[str, Any]) -> dict[str, int]:
    """Every minute: close runs a dead worker left open, wake a job per due source."""
    interrupted = await topics.close_interrupted_runs()
    return {"interrupted": interrupted, "woken": await topics.wake_due_sources()}


async def poll_stream_source(ctx: dict[str, Any], workspace_id: int, source_id: int) -> bool:
    """Poll one wall source if it is due and free (a new source, a manual refresh)."""
    return await stream_polling.poll_source(workspace_id, source_id)


async def poll_due_streams(ctx: dict[str, Any]) -> int:
    """Every 5 s: poll the wall's due sources, at most 4 at once in this worker."""
    return await stream_polling.run_due()


async def sweep_feed_items(ctx: dict[str, Any]) -> int:
    """Daily: delete wall items past their expiry or unseen for 30 days."""
    return await streams.sweep_items()


async def import_items(ctx: dict[str, Any], hops: int = 0) -> int:
    """Read due import items (any job, claimed fairly) until none is left.

    `hops`: how often the wake-up was passed on by processes that read already.
    """
    if await import_step.pass_on(hops):
        return 0
    processed = await import_step.run_loop()
    # The last loop anywhere: run the analyses that waited for the reading.
    if not await import_step.reading_anywhere():
        await analysis.reconcile()
    return processed


async def reconcile_imports(ctx: dict[str, Any]) -> int:
    """Return dead workers' import items and wake a loop for every job with due items."""
    return await imports.reconcile()


async def clean_up_imports(ctx: dict[str, Any]) -> int:
    """Hourly: archive import jobs finished more than 30 days ago."""
    return await imports.archive_old_jobs()
