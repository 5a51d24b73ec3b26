"""The import step: claim an item, read it, store it, finish it - then the next.

    claim (fair, SKIP LOCKED, lease + token) -> already in the library? duplicate
    -> extract through egress (a wall post saved as itself: read what the wall stored)
    -> process_scraped_article -> item state, counters

`run_loop` is what an arq wake-up runs: it claims and processes items (of
any job: the claim decides fairly) until nothing is due. At most
IMPORT_WORKER_LOOPS loops run in one process; a wake-up beyond that
returns at once, since the running loops will get to the work. While an
item is read, app.core.leases renews its lease every half lease; a worker
that dies leaves the lease to expire and the reconciler returns the item.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.articles import queries as article_queries
from app.articles.extraction import ExtractionError, extract
from app.articles.types import Source
from app.core import config, i18n, jobs, leases
from app.core.i18n import _
from app.imports import policy, queries, services
from app.imports.types import FETCH_AGAIN, Claim, ItemState
from app.wall import queries as wall_queries
from app.wall.saving import post_as_article

log = logging.getLogger(__name__)

# Redis unreachable (egress keeps its host budgets there): read the item again this much later.
REDIS_RETRY_SECONDS = 15.0

_loops = 0  # loops running in this process
# A loop hands over to a fresh wake-up after this long, so it never meets arq's
# job timeout and other tasks queued meanwhile get their turn.
LOOP_SECONDS = 240.0


def reading() -> bool:
    """True while an import loop runs in this process (analyses wait for it: workers.tasks)."""
    return _loops > 0


async def reading_anywhere() -> bool:
    """True while this process or any other reads import items (PostgreSQL's leases say).

    On a machine with few cores an idle worker's analyses take the CPU the reading
    one needs. A dead reader's lease runs out within IMPORT_LEASE_SECONDS, so
    nothing waits for it longer than that.
    """
    return reading() or await queries.items_being_read()


# A wake-up that finds this process reading the job it would claim next is passed on (a
# few times, briefly deferred) so that an idle worker process takes it: arq hands all of a
# job's wake-ups to whichever process polls first, and one process reads on one core
# however many loops it runs. Where no other process takes it, it runs where it lands after
# the last pass (under a second later: a single worker still reads with every slot). Each
# pass is due at a random moment within arq's poll period (jobs.POLL_SECONDS): due at a
# fixed delay, it met the processes' polls in the same order every time, and the reading
# process won all five. A job no loop here reads yet (a quick add beside an import) is
# claimed at once.
PASS_ON_TIMES = 5
PASS_ON_SECONDS = (0.1 * jobs.POLL_SECONDS, 1.1 * jobs.POLL_SECONDS)
_jobs_read: Counter[int] = Counter()  # items this process reads, per job


async def pass_on(hops: int) -> bool:
    """Pass the wake-up on if this process reads the job it would claim next; True if so."""
    if not reading() or hops >= PASS_ON_TIMES:
        return False
    claiming = _loops > sum(_jobs_read.values())  # a loop here is about to claim it
    candidates = await queries.claim_candidates(limit=1)
    if not candidates or not (claiming or candidates[0][1] in _jobs_read):
        return False
    await services.pass_on(hops + 1, random.uniform(*PASS_ON_SECONDS))
    return True


async def run_loop(worker: str | None = None) -> int:
    """Process due items until none is left; returns how many were processed."""
    global _loops
    if _loops >= config.active().import_worker_loops:
        return 0
    _loops += 1
    try:
        processed = 0
        worker = worker or services.worker_id()
        loop = asyncio.get_running_loop()
        until = loop.time() + LOOP_SECONDS
        while (claim := await services.claim_next(worker)) is not None:
            _jobs_read[claim.job_id] += 1
            try:
                await process(claim)
            finally:
                _jobs_read[claim.job_id] -= 1
                if not _jobs_read[claim.job_id]:
                    del _jobs_read[claim.job_id]
            processed += 1
            if loop.time() > until:
                await services.hand_over()
                break
        return processed
    finally:
        _loops -= 1


async def process(claim: Claim) -> ItemState | None:
    """Read one claimed item to its next state; None if the claim was lost meanwhile."""
    lease_seconds = config.active().import_lease_seconds
    async with leases.heartbeat(
        lambda: services.renew_lease(claim),
        name=f"import item {claim.item_id}",
        every=lease_seconds / 2,
        lease_seconds=lease_seconds,
    ) as lease:
        try:
            return await _read(claim, lease)
        except leases.LeaseLost:
            return None  # another worker has the item now; its result counts
        except asyncio.CancelledError:
            # Stopped (shutdown, timeout): give the item back at once, uncounted.
            back = policy.Retry(_("The worker stopped; the page will be read again."), 0, False)
            await asyncio.shield(services.fail(claim, back))
            raise
        except (RedisConnectionError, RedisTimeoutError) as error:
            # Our outage, not the page's: the item waits, uncounted (the worker waits too).
            log.warning("import item %s waits for Redis: %s", claim.item_id, error)
            back = policy.Retry(
                _("Redis is unreachable; the page will be read again."),
                REDIS_RETRY_SECONDS,
                counts=False,
            )
            return await services.fail(claim, back)
        except Exception:
            log.exception("import item %s (%s) failed unexpectedly", claim.item_id, claim.url)
            reason = _("Reading the page failed on an unexpected error.")
            return await services.fail(claim, policy.Fail(reason))


async def _read(claim: Claim, lease: leases.Lease) -> ItemState | None:
    # Dedup before fetch: a URL the library has costs no request (unless it is fetched
    # again for that very article: `services.fetch_again`).
    if claim.replaces is None:
        existing = await article_queries.article_id_by_url(claim.workspace_id, claim.url)
        if existing is not None:
            return await services.duplicate(claim, existing)
    if claim.source == Source.WALL:
        return await _save_post(claim)
    try:
        extracted = await extract(claim.url)
    except ExtractionError as error:
        return await services.fail(claim, policy.after_failure(error, claim.attempts))
    lease.check()
    # A fetch again keeps the article's source: the one it was saved with.
    source = Source.MANUAL if claim.source == FETCH_AGAIN else Source(claim.source)
    return await services.save(claim, extracted.scraped(source))


async def _save_post(claim: Claim) -> ItemState | None:
    """A wall post saved as itself: from what the wall stored, with no fetch."""
    saved = await wall_queries.saved_post(claim.workspace_id, claim.job_id)
    if saved is None:  # swept from the wall (30 days) before the job ran
        return await services.fail(claim, policy.Fail(_("The post is no longer on the wall.")))
    # The words the article gains (a credit line) are content: in the saver's language, not
    # the worker's; reasons stored for the item stay English (docs/decisions/i18n.md).
    with i18n.speaking(saved.language):
        article = post_as_article(saved.post)
    return await services.save(claim, article)
