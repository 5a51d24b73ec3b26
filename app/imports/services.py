"""The bulk import's use cases: the only writers of import_jobs and import_items.

People create, pause, resume, cancel, retry and delete jobs. Workers claim
items (fair across workspaces and jobs, at most IMPORT_IN_FLIGHT_PER_JOB of
one job in flight, `FOR UPDATE SKIP LOCKED`, a lease and a lease token),
renew their lease, and write each result only under the token that claimed
it, so a worker that lost its lease cannot overwrite a newer attempt. A
job's counters change in the same transaction as its item; the items are
the truth. Every change tells the open pages after commit; wake-ups go out
after commit too, and the reconciler re-sends whatever PostgreSQL says is
due, so losing Redis loses no work.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Any

from asyncpg import Record
from asyncpg.exceptions import LockNotAvailableError

from app.articles import services as article_services
from app.articles.services import process_scraped_article, store_unavailable_reason
from app.articles.types import ArticleNotFound, OutcomeKind, ScrapedArticle, Source, Warning
from app.core import config, db, jobs
from app.core.i18n import _
from app.events.describe import import_subject
from app.events.services import record
from app.imports import policy, queries
from app.imports.parsing import parse_urls
from app.imports.types import (
    FETCH_AGAIN,
    IMPORTS_TOPIC,
    Claim,
    ImportJobNotFound,
    ImportRefused,
    ItemState,
    JobStatus,
    job_topic,
)
from app.live.notices import publish_after_commit

log = logging.getLogger(__name__)

STEP_TASK = "import_items"  # workers.tasks.import_items(ctx)
EVENT_STARTED = "article_import_started"  # ArticleImportStarted
EVENT_FINISHED = "article_import_finished"  # ArticleImportFinished
ARCHIVE_AFTER_DAYS = 30
RECONCILE_SECONDS = 15  # how often workers.settings runs the reconciler


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _notify(tx: db.Tx, job_id: int) -> None:
    publish_after_commit(tx, job_topic(job_id))
    publish_after_commit(tx, IMPORTS_TOPIC)


def _wake(tx: db.Tx, job_id: int, count: int) -> None:
    """Wake up to `count` worker loops once `tx` commits (ids coalesce per job)."""
    for k in range(max(1, min(count, config.active().import_in_flight_per_job))):
        jobs.enqueue_after_commit(tx, STEP_TASK, job_id=f"import:{job_id}:{k}")


# People's use cases ------------------------------------------------------------------


async def create_job(
    workspace_id: int,
    urls: Sequence[str],
    *,
    actor_user_id: int | None,
    source: Source = Source.IMPORT,
) -> int:
    """The job and all its items, in one transaction; ImportRefused if the list is unusable.

    `urls` are entries as a person gave them; they are parsed again here, so
    every caller (page, API, MCP, quick add) gets the same rules.
    """
    async with db.workspace_tx(workspace_id) as tx:
        return await add_job(tx, urls, actor_user_id=actor_user_id, source=source)


async def add_job(
    tx: db.Tx, urls: Sequence[str], *, actor_user_id: int | None, source: Source
) -> int:
    """`create_job` inside the caller's transaction, for a caller that records more with the
    job (the wall links the saved post to it): a worker claims nothing before it commits."""
    return await _add_job(tx, urls, actor_user_id, source.value)


async def _add_job(tx: db.Tx, urls: Sequence[str], actor_user_id: int | None, source: str) -> int:
    settings = config.active()
    parsed = parse_urls("\n".join(urls), max_urls=settings.import_max_urls)
    if parsed.problem:
        raise ImportRefused(parsed.problem)
    valid = list(parsed.valid)
    job_id = await tx.fetchval(
        "INSERT INTO import_jobs (workspace_id, created_by, source, total)"
        " VALUES ($1, $2, $3, $4) RETURNING id",
        tx.workspace_id,
        actor_user_id,
        source,
        len(valid),
    )
    await tx.execute(
        """
        INSERT INTO import_items (workspace_id, job_id, idx, url)
        SELECT $1, $2, n - 1, url FROM unnest($3::text[]) WITH ORDINALITY AS t(url, n)
        """,
        tx.workspace_id,
        job_id,
        valid,
    )
    _notify(tx, job_id)
    _wake(tx, job_id, len(valid))
    return int(job_id)


async def fetch_again(workspace_id: int, article_id: int, *, actor_user_id: int | None) -> int:
    """A one-item job that fetches a consent-walled article's page again and, unless it is
    a wall again, replaces the article's content (same id); the job's id.

    Saving the URL cannot: it is already an article, so the item is a duplicate before any
    fetch. ArticleNotFound if the library has no such article (the trash neither);
    ImportRefused if it was no consent wall.
    """
    async with db.workspace_tx(workspace_id) as tx:
        article = await tx.fetchrow(
            "SELECT url, warnings FROM articles"
            " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
            workspace_id,
            article_id,
        )
        if article is None:
            raise ArticleNotFound(article_id)
        if Warning.CONSENT_WALL.value not in article["warnings"]:
            raise ImportRefused(_("Only an article saved behind a consent wall is fetched again."))
        job_id = await _add_job(tx, [article["url"]], actor_user_id, FETCH_AGAIN)
        # Before commit: no worker sees the item without its article.
        await tx.execute(
            "UPDATE import_items SET article_id = $3 WHERE workspace_id = $1 AND job_id = $2",
            workspace_id,
            job_id,
            article_id,
        )
    return job_id


async def _locked_job(tx: db.Tx, job_id: int) -> JobStatus:
    status = await tx.fetchval(
        "SELECT status FROM import_jobs WHERE workspace_id = $1 AND id = $2"
        " AND deleted_at IS NULL FOR UPDATE",
        tx.workspace_id,
        job_id,
    )
    if status is None:
        raise ImportJobNotFound(job_id)
    return JobStatus(status)


async def pause(workspace_id: int, job_id: int) -> bool:
    """Stop claiming new items; items being read finish. False if not active."""
    async with db.workspace_tx(workspace_id) as tx:
        status = await _locked_job(tx, job_id)
        if status not in (JobStatus.QUEUED, JobStatus.RUNNING):
            return False
        await tx.execute(
            "UPDATE import_jobs SET status = 'paused', updated_at = now() WHERE id = $1", job_id
        )
        _notify(tx, job_id)
    return True


async def resume(workspace_id: int, job_id: int) -> bool:
    async with db.workspace_tx(workspace_id) as tx:
        if await _locked_job(tx, job_id) != JobStatus.PAUSED:
            return False
        await tx.execute(
            """UPDATE import_jobs SET updated_at = now(),
                 status = CASE WHEN started_at IS NULL THEN 'queued' ELSE 'running' END
               WHERE id = $1""",
            job_id,
        )
        _notify(tx, job_id)
        _wake(tx, job_id, config.active().import_in_flight_per_job)
    return True


async def cancel(workspace_id: int, job_id: int) -> bool:
    """Pending items become cancelled; an item being read finishes as cancelled, saving nothing."""
    async with db.workspace_tx(workspace_id) as tx:
        if await _locked_job(tx, job_id) not in (
            JobStatus.QUEUED,
            JobStatus.RUNNING,
            JobStatus.PAUSED,
        ):
            return False
        await _cancel_locked(tx, job_id)
    return True


async def _cancel_locked(tx: db.Tx, job_id: int) -> None:
    cancelled = await tx.fetchval(
        """
        WITH c AS (
          UPDATE import_items SET state = 'cancelled', waiting_for = '', finished_at = now(),
            updated_at = now()
          WHERE workspace_id = $1 AND job_id = $2 AND state = 'pending' RETURNING 1
        ) SELECT count(*) FROM c
        """,
        tx.workspace_id,
        job_id,
    )
    await tx.execute(
        """UPDATE import_jobs SET status = 'cancelled', cancelled_count = cancelled_count + $2,
             finished_at = now(), updated_at = now() WHERE id = $1""",
        job_id,
        cancelled,
    )
    _notify(tx, job_id)


async def retry_failed(workspace_id: int, job_id: int) -> int:
    """Error items go back to pending with fresh attempts; returns how many."""
    async with db.workspace_tx(workspace_id) as tx:
        await _locked_job(tx, job_id)
        count = await tx.fetchval(
            """
            WITH r AS (
              UPDATE import_items SET state = 'pending', attempts = 0, error = '',
                next_attempt_at = now(), finished_at = NULL, updated_at = now()
              WHERE workspace_id = $1 AND job_id = $2 AND state = 'error' RETURNING 1
            ) SELECT count(*) FROM r
            """,
            workspace_id,
            job_id,
        )
        if not count:
            return 0
        await tx.execute(
            """UPDATE import_jobs SET error_count = error_count - $2, updated_at = now(),
                 status = CASE WHEN status IN ('done', 'cancelled') THEN 'running' ELSE status END,
                 finished_at = CASE WHEN status IN ('done', 'cancelled') THEN NULL
                                    ELSE finished_at END
               WHERE id = $1""",
            job_id,
            count,
        )
        _notify(tx, job_id)
        _wake(tx, job_id, count)
    return int(count)


async def delete(workspace_id: int, job_id: int) -> None:
    """Soft-delete the job (cancelling what is left); the articles it saved stay."""
    async with db.workspace_tx(workspace_id) as tx:
        status = await _locked_job(tx, job_id)
        if status in (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.PAUSED):
            await _cancel_locked(tx, job_id)
        await tx.execute(
            "UPDATE import_jobs SET deleted_at = now(), updated_at = now() WHERE id = $1", job_id
        )
        _notify(tx, job_id)


# Workers: claim, lease, result -------------------------------------------------------


def _worker_tx(workspace_id: int, *, lock_timeout: str | None = None) -> Any:
    """A worker's transaction on an item: fixed statements of ours (the article's store
    included), so its connection skips the pool's reset (db.transaction's `stateless`)."""
    return db.workspace_tx(workspace_id, stateless=True, lock_timeout=lock_timeout)


async def claim_next(worker: str) -> Claim | None:
    """Claim the next due item, fairly: the workspace and then the job with the fewest
    items in flight, least recently served first; None when nothing is due."""
    settings = config.active()
    for workspace_id, job_id in await queries.claim_candidates():
        claim = await _claim_in(workspace_id, job_id, worker, settings.import_lease_seconds)
        if claim is not None:
            return claim
    return None


async def _claim_in(workspace_id: int, job_id: int, worker: str, lease: float) -> Claim | None:
    async with _worker_tx(workspace_id) as tx:
        # The job row's lock makes the in-flight count exact across workers: the claim's
        # statement starts after it, so it sees every claim committed before.
        job = await tx.fetchrow(
            """SELECT started_at, total, created_by, source FROM import_jobs
               WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'running')
                 AND deleted_at IS NULL FOR UPDATE""",
            workspace_id,
            job_id,
        )
        if job is None:
            return None
        token = uuid.uuid4()
        # Due first, then input order: the pending items' index reads in that order, so the
        # claim finds its item at once (by input order alone it stepped over every item
        # already read, each claim: a 5,000-URL import slowed as it went).
        item = await tx.fetchrow(
            """
            WITH flight AS (
              SELECT count(*) AS n FROM import_items
              WHERE job_id = $2 AND state = 'extracting' AND leased_until > now()
            ), item AS (
              UPDATE import_items SET state = 'extracting', attempts = attempts + 1,
                last_attempt_at = now(), leased_by = $3, lease_token = $4,
                leased_until = now() + make_interval(secs => $5), updated_at = now()
              WHERE (SELECT n FROM flight) < $6 AND id = (
                SELECT id FROM import_items
                WHERE workspace_id = $1 AND job_id = $2 AND state = 'pending'
                  AND next_attempt_at <= now()
                ORDER BY next_attempt_at, idx LIMIT 1 FOR UPDATE SKIP LOCKED
              )
              RETURNING id, url, attempts, leased_until, article_id
            ), job AS (
              UPDATE import_jobs SET status = 'running', started_at = coalesce(started_at, now()),
                last_claim_at = clock_timestamp(), leased_by = $3,
                leased_until = greatest(import_jobs.leased_until, item.leased_until),
                updated_at = now()
              FROM item WHERE import_jobs.id = $2
            )
            SELECT id, url, attempts, article_id FROM item
            """,
            workspace_id,
            job_id,
            worker,
            token,
            lease,
            config.active().import_in_flight_per_job,
        )
        if item is None:
            return None
        first = job["started_at"] is None
        if first:
            await record(
                tx,
                EVENT_STARTED,
                actor_user_id=job["created_by"],
                subject=import_subject(job["total"]),
                job_id=job_id,
                total_urls=job["total"],
            )
        _notify(tx, job_id)
    return Claim(
        workspace_id, job_id, item["id"], item["url"], job["source"], item["attempts"], token,
        first, replaces=item["article_id"],
    )  # fmt: skip


async def renew_lease(claim: Claim) -> bool:
    """The heartbeat: extend the lease; False if the claim is no longer ours."""
    async with _worker_tx(claim.workspace_id) as tx:
        renewed = await tx.fetchval(
            """UPDATE import_items SET leased_until = now() + make_interval(secs => $4)
               WHERE workspace_id = $1 AND id = $2 AND lease_token = $3
                 AND state = 'extracting' RETURNING id""",
            claim.workspace_id,
            claim.item_id,
            claim.token,
            config.active().import_lease_seconds,
        )
    return renewed is not None


async def _held(tx: db.Tx, claim: Claim) -> bool:
    """Lock the item if this claim still holds it (the fence for every result)."""
    row = await tx.fetchval(
        """SELECT id FROM import_items WHERE workspace_id = $1 AND id = $2
             AND lease_token = $3 AND state = 'extracting' FOR UPDATE""",
        claim.workspace_id,
        claim.item_id,
        claim.token,
    )
    return row is not None


class _Cancelled(Exception):
    """The job was cancelled while the item was read: roll the save back."""


async def save(claim: Claim, event: ScrapedArticle) -> ItemState | None:
    """Store the extracted article and finish the item; None if the claim was lost.

    The article is stored in the item's transaction: if the job was
    cancelled meanwhile, the whole transaction rolls back and the item
    finishes `cancelled` with nothing saved.
    """
    try:
        # No lock is waited for longer than the article's store would wait for one (set
        # with the workspace: the store's own setting then costs no round trip).
        lock_timeout = article_services.LOCK_TIMEOUT  # the store's one setting, read as it is now
        async with _worker_tx(claim.workspace_id, lock_timeout=lock_timeout) as tx:
            if not await _held(tx, claim):
                return None
            # No analysis wake-up per article: the process's last import loop wakes
            # every due analysis when it ends (workers.tasks.import_items); a wake-up
            # now would only be deferred (reading comes first) after costing arq a job.
            outcome = await process_scraped_article(
                claim.workspace_id, event, wake_analysis=False, replacing=claim.replaces
            )
            if outcome.kind == OutcomeKind.FAILED:
                transient = outcome.reason == store_unavailable_reason()
                decision = policy.after_store_failure(outcome.reason, transient, claim.attempts)
                raise _StoreFailed(decision)
            result = policy.stored(outcome, event.warnings)
            if not await _finish(
                tx, claim, result.state, article_id=outcome.article_id, warning=result.warning
            ):
                raise _Cancelled()
            return result.state
    except _Cancelled:
        return await _finish_cancelled(claim)
    except _StoreFailed as failed:
        return await fail(claim, failed.decision)
    except LockNotAvailableError:  # the item or the job held by another past the timeout
        unavailable = store_unavailable_reason()
        return await fail(claim, policy.after_store_failure(unavailable, True, claim.attempts))


class _StoreFailed(Exception):
    def __init__(self, decision: policy.Retry | policy.Fail) -> None:
        super().__init__()
        self.decision = decision


async def duplicate(claim: Claim, article_id: int) -> ItemState | None:
    """The library had the URL before the fetch: nothing is fetched or stored."""
    async with _worker_tx(claim.workspace_id) as tx:
        if not await _held(tx, claim):
            return None
        if not await _finish(tx, claim, ItemState.DUPLICATE, article_id=article_id):
            await _finish(tx, claim, ItemState.CANCELLED, cancelled_ok=True)
            return ItemState.CANCELLED
    return ItemState.DUPLICATE


async def _finish_cancelled(claim: Claim) -> ItemState | None:
    async with _worker_tx(claim.workspace_id) as tx:
        if not await _held(tx, claim):
            return None
        await _finish(tx, claim, ItemState.CANCELLED, cancelled_ok=True)
    return ItemState.CANCELLED


async def fail(claim: Claim, decision: policy.Retry | policy.Fail) -> ItemState | None:
    """A try that did not store anything: back to pending after a delay, or error."""
    async with _worker_tx(claim.workspace_id) as tx:
        if not await _held(tx, claim):
            return None
        if isinstance(decision, policy.Fail):
            if not await _finish(tx, claim, ItemState.ERROR, error=decision.reason):
                await _finish(tx, claim, ItemState.CANCELLED, cancelled_ok=True)
                return ItemState.CANCELLED
            return ItemState.ERROR
        status = await tx.fetchval(
            "SELECT status FROM import_jobs WHERE id = $1 FOR UPDATE", claim.job_id
        )
        if status == JobStatus.CANCELLED:
            await _finish(tx, claim, ItemState.CANCELLED, cancelled_ok=True)
            return ItemState.CANCELLED
        await tx.execute(
            """UPDATE import_items SET state = 'pending', error = $2, waiting_for = $3,
                 attempts = attempts - CASE WHEN $4 THEN 0 ELSE 1 END,
                 next_attempt_at = now() + make_interval(secs => $5),
                 leased_until = NULL, lease_token = NULL, updated_at = now()
               WHERE id = $1""",
            claim.item_id,
            "" if not decision.counts else decision.reason[:1000],
            decision.waiting_for,
            decision.counts,
            decision.delay,
        )
        jobs.enqueue_after_commit(
            tx,
            STEP_TASK,
            job_id=f"import-retry:{claim.item_id}:{claim.attempts}:{decision.counts}",
            defer_by=decision.delay,
        )
        _notify(tx, claim.job_id)
    return ItemState.PENDING


_COUNTER = {
    ItemState.SAVED: "saved_count",
    ItemState.CONSENT_WALL: "saved_count",
    ItemState.DUPLICATE: "duplicate_count",
    ItemState.ERROR: "error_count",
    ItemState.CANCELLED: "cancelled_count",
}


async def _finish(
    tx: db.Tx,
    claim: Claim,
    state: ItemState,
    *,
    article_id: int | None = None,
    warning: str = "",
    error: str = "",
    cancelled_ok: bool = False,
) -> bool:
    """Make the held item terminal and count it; False (nothing written) if the job
    was cancelled meanwhile and `state` is not `cancelled`."""
    status = await tx.fetchval(
        "SELECT status FROM import_jobs WHERE id = $1 FOR UPDATE", claim.job_id
    )
    if status == JobStatus.CANCELLED and not cancelled_ok:
        return False
    # One statement after the job's lock: it sees every item change committed before
    # (they all take that lock), so "no other item is open" is exact. An active job is
    # done when its last open item ends - a paused one too; a cancelled one stays so.
    # Each open state is asked on its own: each has a partial index (state IN (..) has
    # none, and read every item of every job, once per item).
    counter = _COUNTER[state]
    job = await tx.fetchrow(
        f"""
        WITH item AS (
          UPDATE import_items SET state = $3, article_id = coalesce($4, article_id),
            warning = $5, error = $6,
            waiting_for = '', leased_until = NULL, lease_token = NULL, finished_at = now(),
            updated_at = now()
          WHERE id = $2
        ), ending AS MATERIALIZED (  -- once: each use of `done` would ask again
          SELECT $8::boolean
            AND NOT EXISTS (SELECT 1 FROM import_items WHERE job_id = $1 AND id <> $2
                              AND state = 'pending')
            AND NOT EXISTS (SELECT 1 FROM import_items WHERE job_id = $1 AND id <> $2
                              AND state = 'extracting') AS done
        )
        UPDATE import_jobs SET {counter} = {counter} + 1,
          warning_count = warning_count + $7, updated_at = now(),
          status = CASE WHEN done THEN 'done' ELSE status END,
          finished_at = CASE WHEN done THEN now() ELSE finished_at END,
          leased_until = CASE WHEN done THEN NULL ELSE leased_until END
        FROM ending WHERE id = $1
        RETURNING done, total, saved_count, duplicate_count, error_count, warning_count,
          cancelled_count, created_by
        """,
        claim.job_id,
        claim.item_id,
        state.value,
        article_id,
        warning,
        error[:1000],
        1 if warning else 0,
        status in (JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.PAUSED),
    )
    assert job is not None  # locked above
    if job["done"]:
        await _record_finished(tx, claim.job_id, job)
    _notify(tx, claim.job_id)
    return True


async def _record_finished(tx: db.Tx, job_id: int, job: Record) -> None:
    """ArticleImportFinished, with the counters as they are now."""
    await record(
        tx,
        EVENT_FINISHED,
        actor_user_id=job["created_by"],
        subject=import_subject(job["total"]),
        job_id=job_id,
        total_urls=job["total"],
        saved=job["saved_count"],
        duplicates=job["duplicate_count"],
        errors=job["error_count"],
        warnings=job["warning_count"],
        cancelled=job["cancelled_count"],
    )


# The reconciler and the clean-up --------------------------------------------------------


async def requeue_expired() -> int:
    """Items whose worker died (lease expired) go back to pending, or to error after the
    last attempt; returns how many."""
    count = 0
    for workspace_id, job_id, item_id in await queries.expired_items():
        async with _worker_tx(workspace_id) as tx:
            row = await tx.fetchrow(
                """SELECT attempts, lease_token FROM import_items WHERE workspace_id = $1
                     AND id = $2 AND state = 'extracting' AND leased_until < now()
                   FOR UPDATE SKIP LOCKED""",
                workspace_id,
                item_id,
            )
            if row is None:
                continue
            claim = Claim(
                workspace_id, job_id, item_id, "", "", row["attempts"], row["lease_token"], False
            )
            reason = _("The worker reading this page stopped before it finished.")
            if row["attempts"] >= policy.MAX_ATTEMPTS:
                if not await _finish(tx, claim, ItemState.ERROR, error=reason):
                    await _finish(tx, claim, ItemState.CANCELLED, cancelled_ok=True)
            else:
                await tx.execute(
                    """UPDATE import_items SET state = 'pending', error = $2, leased_until = NULL,
                         lease_token = NULL, next_attempt_at = now(), updated_at = now()
                       WHERE id = $1""",
                    item_id,
                    reason,
                )
                _notify(tx, job_id)
            count += 1
    return count


async def reconcile() -> int:
    """Return dead workers' items and wake a loop for every job with due items."""
    await requeue_expired()
    due = await queries.jobs_with_due_items()
    # A fresh id each pass: a dead worker's wake-up may still hold the job's usual
    # ids in arq ("in progress") long after the worker is gone.
    round_ = int(time.time() // RECONCILE_SECONDS)
    for job_id in due:
        await jobs.enqueue(STEP_TASK, job_id=f"import-reconcile:{job_id}:{round_}")
    return len(due)


async def pass_on(hops: int, seconds: float) -> None:
    """Give a wake-up back to the queue, `seconds` from now, for another process to take."""
    await jobs.enqueue(STEP_TASK, hops, job_id=f"import-pass:{uuid.uuid4().hex}", defer_by=seconds)


async def hand_over() -> None:
    """A loop that ran long enough asks for a fresh one (it goes to the queue's end)."""
    await jobs.enqueue(STEP_TASK, job_id=f"import-continue:{uuid.uuid4().hex}")


async def archive_old_jobs(days: int = ARCHIVE_AFTER_DAYS) -> int:
    """Finished jobs older than `days` are archived: their item rows go, counters stay."""
    archived = 0
    for workspace_id, job_id in await queries.jobs_to_archive(days):
        async with db.workspace_tx(workspace_id) as tx:
            await tx.execute(
                "DELETE FROM import_items WHERE workspace_id = $1 AND job_id = $2",
                workspace_id,
                job_id,
            )
            await tx.execute(
                "UPDATE import_jobs SET archived_at = now() WHERE workspace_id = $1 AND id = $2",
                workspace_id,
                job_id,
            )
            _notify(tx, job_id)
            archived += 1
    return archived
