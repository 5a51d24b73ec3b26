"""One poll of one source, front to back, and the scheduler loop that runs them.

    claim (lease, SKIP LOCKED; also reads the columns and the sealed key) -> credential
    (vault, or keyless) -> ledger -> resolve the account (author feeds; cached) -> provider
    call through egress (host budget inside) -> store items, link them to every column of
    the source, next poll (one statement) -> live notice

A manual refresh and a new source wake the same `poll_source` (job
`poll_stream_source`); the arq cron runs `run_due`, which keeps at most
`POLLS_PER_WORKER` polls in flight in this process and claims as many sources at once
as it has free slots. Every path may run twice or
concurrently: the lease decides who polls, and a poll that finds its source
not due does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from contextlib import suppress
from datetime import UTC, datetime

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.articles.extraction import failure_of
from app.core import db, leases
from app.core.i18n import _
from app.egress import EgressError, HttpStatusError, RateLimited
from app.streams import platforms, resolver, services
from app.streams.providers import (
    AccountNotFound,
    BudgetExhausted,
    Credential,
    CredentialRejected,
    FetchRequest,
    Page,
    Provider,
    ProviderError,
    ProviderRefused,
    fetch,
    needs_key,
    provider_for,
)
from app.streams.schedule import (
    Outcome,
    after_failure,
    after_not_found,
    after_outage,
    after_rate_limit,
    after_rejection,
    after_success,
    budget_paused,
)
from app.streams.services import LeasedSource
from app.streams.types import SourceKind, SourceState
from app.vault import VaultError

log = logging.getLogger(__name__)

POLLS_PER_WORKER = 4
PAGE_LIMIT = 40  # items asked for per poll
RUN_SECONDS = 50.0  # one cron run polls for at most this long, then the next tick goes on

_slots = asyncio.Semaphore(POLLS_PER_WORKER)
_running = False  # one scheduler loop per process; overlapping cron ticks return at once


async def poll_source(workspace_id: int, source_id: int, *, jitter: float | None = None) -> bool:
    """Poll one source if it is due and free; False when there was nothing to do."""
    # System work: each statement names the workspace itself (and the claim is one of them).
    with db.system():
        async with _slots:
            source = await services.claim_source(workspace_id, source_id)
            if source is None:
                return False
            await _poll_claimed(source, jitter)
    return True


async def run_due(*, seconds: float = RUN_SECONDS, jitter: float | None = None) -> int:
    """Poll due sources of every workspace, up to `POLLS_PER_WORKER` at once; polls started."""
    global _running
    if _running:
        return 0
    _running = True
    started, deadline = 0, time.monotonic() + seconds
    try:
        # System work: claims span workspaces, and each poll's statements name theirs.
        with db.system():
            async with asyncio.TaskGroup() as group:
                while time.monotonic() < deadline:
                    free = await _take_free_slots()
                    try:
                        claimed = await claim_due(free)
                    except BaseException:
                        _release(free)
                        raise
                    _release(free - len(claimed))
                    for source in claimed:
                        group.create_task(_run_and_release(source, jitter))
                    started += len(claimed)
                    if len(claimed) < free:
                        break  # nothing more is due
    finally:
        _running = False
    return started


async def claim_due(limit: int) -> list[LeasedSource]:
    """Lease up to `limit` due sources (one statement) and bring their accounts' cached
    resolutions into this process (one Redis round trip for the batch, not one per poll)."""
    claimed = await services.claim_due(limit)
    await resolver.prefetch(
        (source.provider, _handle_of(source))
        for source in claimed
        if source.kind == SourceKind.AUTHOR
    )
    return claimed


def _handle_of(source: LeasedSource) -> str:
    """The account an author source follows (its actor ref is "provider:handle")."""
    return source.actor_ref.partition(":")[2]


async def _take_free_slots() -> int:
    """Wait for one poll slot, then take every other free one: one claim fills them all
    (slots are taken before sources are claimed, so nothing leased waits for a slot)."""
    await _slots.acquire()
    taken = 1
    while not _slots.locked():
        await _slots.acquire()  # free: returns at once
        taken += 1
    return taken


def _release(slots: int) -> None:
    for _slot in range(slots):
        _slots.release()


async def _run_and_release(source: LeasedSource, jitter: float | None) -> None:
    try:
        await _poll_claimed(source, jitter)
    finally:
        _slots.release()


async def _poll_claimed(source: LeasedSource, jitter: float | None) -> None:
    j = random.uniform(-1, 1) if jitter is None else jitter
    try:
        async with leases.heartbeat(
            lambda: services.renew_lease(source), name=f"stream-source:{source.id}"
        ) as lease:
            await _poll(source, j, lease)
    except leases.LeaseLost:
        log.warning("stream source %s: lease lost, the poll's result is dropped", source.id)
    except asyncio.CancelledError:
        # Stopped (shutdown): count it as a failed poll so the lease is not left to expire.
        with suppress(leases.LeaseLost):
            message = _("The poll was interrupted.")
            await asyncio.shield(services.finish(source, _failed(source, j), message))
        raise
    except (RedisConnectionError, RedisTimeoutError) as error:
        # Our outage (egress keeps its host budgets in Redis), not the source's: the column
        # says so and the poll is retried on the back-off, uncounted. One line, no traceback.
        log.warning("stream source %s: Redis is unreachable, the poll waits: %s", source.id, error)
        with suppress(leases.LeaseLost):
            message = _("Temporarily unavailable: Newsdesk cannot reach its Redis. Retrying.")
            outcome = after_outage(
                source.interval_ms, source.consecutive_failures,
                polled_before=source.polled_before, jitter=j,
            )  # fmt: skip
            await services.finish(source, outcome, message)
    except Exception:
        log.exception("stream source %s: the poll failed unexpectedly", source.id)
        with suppress(leases.LeaseLost):
            message = _("The poll failed on an unexpected error.")
            await services.finish(source, _failed(source, j), message)


class _NotFound(Exception):
    def __init__(self, handle: str, *, surely: bool = True) -> None:
        self.handle = handle
        # False for a bare 404 from a feed: YouTube's feeds answer one now and then, so a
        # source that has worked takes it as any failure (its third in a row says so).
        self.surely = surely


# What an account's feed answers when the account is gone since it was resolved (the handle
# cache keeps a found account for 10 minutes): Mastodon's statuses, a YouTube or RSS feed.
_GONE = frozenset({404, 410})


async def _call(
    provider: Provider, source: LeasedSource, credential: Credential | None, limit: int
) -> Page:
    """The provider call for the source (resolving its account first, through the cache)."""
    request = FetchRequest(query=source.query, cursor=source.cursor, limit=limit)
    if source.kind == SourceKind.AUTHOR:
        handle = _handle_of(source)
        actor = await resolver.resolve(provider, credential, handle)
        if actor is None:
            raise _NotFound(handle)
        request = FetchRequest(actor=actor, cursor=source.cursor, limit=limit)
        try:
            return await fetch(provider, source.kind, credential, request)
        except AccountNotFound:
            raise _NotFound(handle) from None
        except HttpStatusError as error:
            if error.status in _GONE:
                raise _NotFound(handle, surely=error.status == 410) from None
            raise
    return await fetch(provider, source.kind, credential, request)


def _failed(source: LeasedSource, jitter: float) -> Outcome:
    return after_failure(
        source.interval_ms, source.consecutive_failures, polled_before=source.polled_before,
        jitter=jitter,
    )  # fmt: skip


async def _poll(source: LeasedSource, jitter: float, lease: leases.Lease) -> None:
    provider = provider_for(source.provider)
    if provider is None or source.kind not in provider.kinds:
        await services.mark_unsupported(source, _("This server cannot read this source yet."))
        return
    # 1. Credential: the connection's (gone: the source stops), else the workspace's key.
    credential: Credential | None
    try:
        credential = services.claimed_credential(source)
    except services.ConnectionGone:
        await services.disable(source, _("The connected account was removed; reconnect it."))
        return
    except VaultError:
        message = _("The stored key no longer opens; enter it again.")
        await services.finish(source, _failed(source, jitter), message)
        return
    if credential is None and needs_key(source.provider, source.kind):
        label = platforms.PLATFORMS[source.provider].label
        message = _("Add the workspace's %(p)s key in Settings to read this.") % {"p": label}
        await services.finish(source, after_rejection(source.consecutive_failures, jitter), message)
        return
    # 2. The provider's ledger (a paid or windowed API), before any request: it reserves
    # what the call may spend at most (one call, or up to a page of posts read).
    rule = platforms.PLATFORMS[source.provider].ledger
    grant: services.Grant | None = None
    limit = PAGE_LIMIT
    if rule is not None and source.kind in rule.kinds:
        grant = await services.reserve_ledger(
            source.workspace_id, source.provider, rule, wanted=PAGE_LIMIT if rule.per_item else 1,
            subject=source.query,
        )  # fmt: skip
        if not grant.units:
            now = datetime.now(UTC)
            if grant.state == SourceState.RATE_LIMITED:  # a rolling slot frees at a known time
                wait = (grant.frees_at - now).total_seconds()
                outcome = after_rate_limit(source.interval_ms, source.consecutive_failures, wait)
            else:
                outcome = budget_paused(grant.frees_at, now, source.consecutive_failures)
            await services.finish(source, outcome, grant.reason)
            return
        limit = grant.units if rule.per_item else PAGE_LIMIT
    # 3. The call, through egress (the per-host budget is taken there).
    page = None
    try:
        page = await _call(provider, source, credential, limit)
    except BudgetExhausted as error:
        await services.exhaust_ledger(source.workspace_id, source.provider)
        grant = None  # spent as the platform says: nothing is given back
        outcome = budget_paused(error.until, datetime.now(UTC), source.consecutive_failures)
        await services.finish(source, outcome, error.message)
        return
    except CredentialRejected as error:
        outcome = after_rejection(source.consecutive_failures, jitter)
        await services.finish(source, outcome, error.message)
        return
    except RateLimited as error:
        outcome = after_rate_limit(source.interval_ms, source.consecutive_failures,
                                   error.retry_after, jitter=jitter)  # fmt: skip
        await services.finish(source, outcome, failure_of(error.url, error).reason)
        return
    except EgressError as error:
        # Said the way feeds and imports say it ("The site had an error (HTTP 500)...").
        reason = failure_of(error.url, error).reason
        await services.finish(source, _failed(source, jitter), reason)
        return
    except ProviderRefused as error:
        await services.mark_unsupported(source, error.message)  # until a key is added
        return
    except ProviderError as error:
        await services.finish(source, _failed(source, jitter), error.message)
        return
    except _NotFound as missing:
        # The platform's answer, not a failure to ask: said at once (a timeout is retried).
        message = services.handle_not_found(source.provider, missing.handle)
        if missing.surely or not source.polled_before:
            outcome = after_not_found(
                source.interval_ms, source.consecutive_failures, jitter=jitter
            )
        else:
            outcome = _failed(source, jitter)
        await services.finish(source, outcome, message)
        return
    finally:
        if grant is not None and rule is not None and rule.per_item:
            # Posts not read are given back (a failed call read none).
            used = page.units if page is not None else 0
            await services.settle_ledger(source.workspace_id, source.provider, rule, grant, used)
    # 4. Store and link; the source is ready again (only if it is still ours).
    lease.check()
    await services.store_page(source, page, after_success(source.interval_ms, jitter=jitter))
