"""Resolving account handles through their provider, bounded and cached.

A found account is remembered for 10 minutes, a missing one for 1 minute
(Redis, shared by every process), so a column of 50 handles saved twice, or
polled every minute, asks the platform once. Each process keeps a copy of what
it read or wrote until the moment Redis forgets it (an entry is only ever
written on a miss, so the copy never differs from Redis): a source polled every
minute reads Redis about once per 10 minutes, not on every poll, and the scheduler
reads the entries of a whole claimed batch in one round trip (`prefetch`). At most 4
resolutions per host run at once in a process; egress's per-host budget bounds
all processes. Redis trouble only costs the cache, never the resolution.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from contextlib import suppress

from redis.exceptions import RedisError

from app.core import config, redis
from app.streams.providers import Actor, Credential, Provider

log = logging.getLogger(__name__)

FOUND_TTL_S = 600
MISSING_TTL_S = 60
IN_FLIGHT_PER_HOST = 4
LOCAL_ENTRIES = 50_000  # the process's copy; the oldest entry goes first beyond this
_MISSING = "-"

# key -> (monotonic time Redis forgets it, the answer)
_local: dict[str, tuple[float, Actor | None]] = {}

_slots: defaultdict[str, asyncio.Semaphore] = defaultdict(
    lambda: asyncio.Semaphore(IN_FLIGHT_PER_HOST)
)


def _key(provider: str, handle: str) -> str:
    digest = hashlib.sha256(handle.encode()).hexdigest()[:32]
    return config.active().redis_key("streams", "handle", provider, digest)


def _keep(key: str, answer: Actor | None, seconds: float) -> None:
    if seconds <= 0:
        return
    if len(_local) >= LOCAL_ENTRIES:
        del _local[next(iter(_local))]
    _local[key] = (time.monotonic() + seconds, answer)


def forget_local() -> None:
    """Drop this process's copy (a test that flushed Redis)."""
    _local.clear()


async def _cached(key: str) -> Actor | bool | None:
    """The cached answer, or False when there is none."""
    kept = _local.get(key)
    if kept is not None:
        if kept[0] > time.monotonic():
            return kept[1]
        del _local[key]
    try:
        async with redis.client().pipeline(transaction=False) as pipe:
            pipe.get(key)
            pipe.pttl(key)
            value, ttl_ms = await pipe.execute()
    except RedisError:
        log.warning("streams: handle cache unavailable")
        return False
    if value is None:
        return False
    answer = _answer(value)
    _keep(key, answer, ttl_ms / 1000)  # read before the reply came: never outlives Redis's
    return answer


async def prefetch(handles: Iterable[tuple[str, str]]) -> None:
    """Copy the cached answers for (provider, handle) pairs into this process in one round
    trip: the scheduler claims several author sources at once, and their polls then find
    the answer here instead of each reading Redis. Entries Redis does not hold are left to
    the polls (they resolve); Redis trouble is theirs to report too."""
    keys = {_key(provider, handle) for provider, handle in handles}
    now = time.monotonic()
    wanted = [key for key in keys if key not in _local or _local[key][0] <= now]
    if not wanted:
        return
    try:
        async with redis.client().pipeline(transaction=False) as pipe:
            for key in wanted:
                pipe.get(key)
                pipe.pttl(key)
            replies = await pipe.execute()
    except RedisError:
        return
    for key, value, ttl_ms in zip(wanted, replies[::2], replies[1::2], strict=True):
        if value is None:
            continue
        # An unreadable entry is left to its poll, which meets it and says so.
        with suppress(ValueError, KeyError, TypeError):
            _keep(key, _answer(value), ttl_ms / 1000)


def _answer(value: bytes | str) -> Actor | None:
    text = value.decode() if isinstance(value, bytes) else str(value)
    return None if text == _MISSING else _actor(text)


def _actor(text: str) -> Actor:
    data = json.loads(text)
    return Actor(ref=data["ref"], handle=data["handle"], display_name=data["display_name"])


async def _remember(key: str, actor: Actor | None) -> None:
    value = (
        _MISSING
        if actor is None
        else json.dumps(
            {"ref": actor.ref, "handle": actor.handle, "display_name": actor.display_name}
        )
    )
    ttl = FOUND_TTL_S if actor else MISSING_TTL_S
    expires = time.monotonic() + ttl  # taken before Redis starts counting
    try:
        await redis.client().set(key, value, ex=ttl)
    except RedisError:
        log.warning("streams: handle cache unavailable")
        return
    _keep(key, actor, expires - time.monotonic())


async def resolve(provider: Provider, credential: Credential | None, handle: str) -> Actor | None:
    """The account behind `handle`, None if the platform has none; egress errors pass through
    (a timeout is not an answer, so it is not cached)."""
    key = _key(provider.name, handle)
    cached = await _cached(key)
    if cached is not False:
        return cached if isinstance(cached, Actor) else None
    async with _slots[provider.host_of(credential, handle)]:
        actor = await provider.resolve_handle(credential, handle)
    await _remember(key, actor)
    return actor
