"""Reading comes first: while any worker process reads import items, analyses wait, then run.

The analysis of a stored article is CPU work; run between items - in the
reading process or in an idle one sharing its cores - it made a bulk import
several times slower (issue 8's benchmark). It waits, pending in PostgreSQL,
and the last import loop to end wakes the due analyses.
"""

from __future__ import annotations

import asyncio
import dataclasses

from app.articles.services import process_scraped_article
from app.core import db
from app.imports import services, step
from tests.articles.helpers import article_event, queued_jobs
from workers import tasks


async def _saved_article(job_id: int) -> int:
    for _ in range(200):
        article_id = await db.fetchval(
            "SELECT article_id FROM import_items WHERE job_id = $1 AND state = 'saved'", job_id
        )
        if article_id is not None:
            return int(article_id)
        await asyncio.sleep(0.02)
    raise AssertionError("the first item was never saved")


async def _analysis_status(article_id: int) -> str:
    return str(await db.fetchval("SELECT status FROM analyses WHERE article_id = $1", article_id))


async def test_analyses_wait_while_the_process_reads_items_and_run_after(
    people, site, site_egress, redis
):
    workspace = (await people.member("editor")).workspace_id
    site.routes["/news/quick"] = site.page("article.html")
    # Slow enough to be still in flight when the quick one is stored, on a loaded machine too
    # (there the quick page alone, with the page readers starting, took over a second).
    site.routes["/news/slow"] = dataclasses.replace(site.page("article.html"), delay=4.0)
    job_id = await services.create_job(
        workspace, [site.base + "/news/quick", site.base + "/news/slow"], actor_user_id=None
    )

    loop = asyncio.create_task(tasks.import_items({}))
    article_id = await _saved_article(job_id)  # the quick page; the slow one is being read
    assert step.reading()
    # No wake-up per stored article: arq would run a job only to defer it.
    queued = [j.args for j in await queued_jobs() if j.function == "analyse_article"]
    assert (workspace, article_id) not in queued
    assert await tasks.analyse_article({}, workspace, article_id) == tasks.DEFERRED
    assert await _analysis_status(article_id) == "pending"
    await redis.flushdb()  # the deferred task used up its wake-up, as in arq

    assert await loop == 2
    assert not step.reading()
    woken = [j.args for j in await queued_jobs() if j.function == "analyse_article"]
    assert (workspace, article_id) in woken
    assert await tasks.analyse_article({}, workspace, article_id) == "completed"
    assert await _analysis_status(article_id) == "completed"


def _analysis_wakeups(jobs: list) -> list[tuple]:
    return [j.args for j in jobs if j.function == "analyse_article"]


async def test_analyses_wait_while_another_process_reads_items(people, site, site_egress, redis):
    workspace = (await people.member("editor")).workspace_id
    stored = await process_scraped_article(workspace, article_event())
    assert stored.article_id is not None
    site.routes["/news/read-elsewhere"] = site.page("article.html")
    await services.create_job(workspace, [site.base + "/news/read-elsewhere"], actor_user_id=None)
    # Another worker process holds the item under a live lease; this one reads nothing.
    claim = await services.claim_next("elsewhere:1")
    assert claim is not None
    assert not step.reading()
    await redis.flushdb()

    assert await tasks.analyse_article({}, workspace, stored.article_id) == tasks.DEFERRED
    assert await tasks.reconcile_analyses({}) == 0  # waking them now would only defer them
    assert _analysis_wakeups(await queued_jobs()) == []
    assert await _analysis_status(stored.article_id) == "pending"

    # That process died: once its lease has run out nothing holds the analyses back.
    await db.fetch(
        "UPDATE import_items SET leased_until = now() - interval '1 second' WHERE id = $1",
        claim.item_id,
    )
    assert await tasks.reconcile_analyses({}) >= 1
    assert (workspace, stored.article_id) in _analysis_wakeups(await queued_jobs())
    assert await tasks.analyse_article({}, workspace, stored.article_id) == "completed"
