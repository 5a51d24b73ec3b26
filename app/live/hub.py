"""One Redis pub/sub connection per process, fanned out to local streams.

Each open page holds a `Subscription`: a set of changed topics and an event.
Notices coalesce - a burst of a hundred notices wakes a stream once - so a
slow browser never makes a queue grow. When the Redis connection drops, every
subscription is told that everything changed, since notices may have been
lost while it was down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from collections.abc import AsyncIterator

from redis.asyncio import Redis

from app.core import redis as core_redis
from app.live.notices import channel_pattern

log = logging.getLogger(__name__)

EVERYTHING = "*"


class Subscription:
    def __init__(self, workspace_id: int, topics: frozenset[str]) -> None:
        self.workspace_id = workspace_id
        self.topics = topics
        self._changed: set[str] = set()
        self._wake = asyncio.Event()
        self.closed = False

    def notify(self, topic: str) -> None:
        if topic == EVERYTHING or topic in self.topics:
            self._changed.add(topic)
            self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def next_change(self, timeout: float) -> set[str]:
        """Topics changed since the last call; empty after `timeout` seconds of quiet."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()
        changed, self._changed = self._changed, set()
        if EVERYTHING in changed:
            return set(self.topics)
        return changed


class Hub:
    def __init__(self) -> None:
        self._subs: dict[int, set[Subscription]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    @contextlib.asynccontextmanager
    async def subscribe(self, workspace_id: int, topics: set[str]) -> AsyncIterator[Subscription]:
        """Follow `topics` of one workspace; subscribed before the caller renders state."""
        self._ensure_running()
        await asyncio.wait_for(self._ready.wait(), timeout=10)
        sub = Subscription(workspace_id, frozenset(topics))
        self._subs[workspace_id].add(sub)
        try:
            yield sub
        finally:
            self._subs[workspace_id].discard(sub)
            if not self._subs[workspace_id]:
                del self._subs[workspace_id]

    def dispatch(self, workspace_id: int, topic: str) -> None:
        for sub in list(self._subs.get(workspace_id, ())):
            sub.notify(topic)

    def _resync_all(self) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.notify(EVERYTHING)

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._ready.clear()
            self._task = asyncio.create_task(self._listen_forever(), name="live-hub")

    async def _listen_forever(self) -> None:
        delay = 0.2
        first = True
        while True:
            try:
                await self._listen(resync=not first)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # connection lost: reconnect, then resync
                log.warning("live hub lost Redis (%s); reconnecting", error)
                self._ready.clear()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                first = False

    async def _listen(self, *, resync: bool) -> None:
        client: Redis = core_redis.client()
        pattern = channel_pattern()
        prefix = pattern[:-1]
        async with client.pubsub() as pubsub:
            await pubsub.psubscribe(pattern)
            self._ready.set()
            if resync:
                self._resync_all()
            async for message in pubsub.listen():
                if message.get("type") != "pmessage":
                    continue
                channel = _text(message["channel"])
                try:
                    workspace_id = int(channel[len(prefix) :])
                    topic = json.loads(_text(message["data"]))["topic"]
                except (ValueError, KeyError, TypeError):
                    log.warning("ignored malformed notice on %s", channel)
                    continue
                self.dispatch(workspace_id, topic)

    async def close(self) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


hub = Hub()
