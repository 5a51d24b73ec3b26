"""One Redis pub/sub connection per process, fanned out to local streams.

Each open view holds a `Subscription`: a set of changed topics and an event.
Notices coalesce - a burst of a hundred notices wakes a stream once - so a
slow browser never makes a queue grow.

When the Redis connection drops, every subscription is told `PAUSED` (pages
show "live updates paused"); the hub reconnects with back-off and then tells
every subscription `EVERYTHING` changed, since notices may have been lost
while it was down: streams resend their whole state (state-then-follow).

Besides the workspace channels the hub follows one channel per person: a
notice there says the person's access changed (removed, demoted, signed out),
and their open streams re-check it at once (`watch_user`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator

from redis.asyncio import Redis

from app.core import redis as core_redis
from app.live.notices import channel_pattern, user_channel_pattern

log = logging.getLogger(__name__)

EVERYTHING = "*"  # resync: every topic may have changed
PAUSED = "!paused"  # the hub lost Redis: no notices arrive until it is back

# How long a new stream waits for the hub's first connection before it
# starts anyway, paused (its state comes from PostgreSQL, not Redis).
READY_WAIT_SECONDS = 1.0
BACKOFF_FIRST_SECONDS = 0.2
BACKOFF_MAX_SECONDS = 5.0
# A quiet pub/sub connection is pinged this often, so a silently dead one is noticed.
PING_SECONDS = 5.0


class Subscription:
    def __init__(self, workspace_id: int, topics: frozenset[str]) -> None:
        self.workspace_id = workspace_id
        self.topics = topics
        # "streams.column:*" follows every topic that starts with "streams.column:".
        self._prefixes = tuple(t[:-1] for t in topics if t.endswith(":*"))
        self._changed: set[str] = set()
        self._wake = asyncio.Event()
        self.closed = False

    def notify(self, topic: str) -> None:
        if (
            topic in (EVERYTHING, PAUSED)
            or topic in self.topics
            or (self._prefixes and topic.startswith(self._prefixes))
        ):
            if topic == EVERYTHING:
                self._changed.discard(PAUSED)
            self._changed.add(topic)
            self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def next_change(self, timeout: float) -> set[str]:
        """Topics changed since the last call; empty after `timeout` seconds of quiet.

        After a reconnect the set holds every topic and `EVERYTHING`; while the
        hub has no Redis it holds `PAUSED`.
        """
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()
        changed, self._changed = self._changed, set()
        if EVERYTHING in changed:
            return set(self.topics) | {EVERYTHING}
        return changed


class Hub:
    def __init__(self, connect: Callable[[], Redis] | None = None) -> None:
        self._connect = connect or core_redis.client
        self._subs: dict[int, set[Subscription]] = defaultdict(set)
        self._watches: dict[int, set[Callable[[], None]]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._ready.is_set()

    @contextlib.asynccontextmanager
    async def subscribe(self, workspace_id: int, topics: set[str]) -> AsyncIterator[Subscription]:
        """Follow `topics` of one workspace; subscribed before the caller renders state.

        Without Redis the subscription starts paused; it resyncs once the hub is back.
        """
        self._ensure_running()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), READY_WAIT_SECONDS)
        sub = Subscription(workspace_id, frozenset(topics))
        if not self.connected:
            sub.notify(PAUSED)
        self._subs[workspace_id].add(sub)
        try:
            yield sub
        finally:
            self._subs[workspace_id].discard(sub)
            if not self._subs[workspace_id]:
                del self._subs[workspace_id]

    @contextlib.contextmanager
    def watch_user(self, user_id: int, on_change: Callable[[], None]) -> Iterator[None]:
        """Call `on_change` at once when `user_id`'s access changes (removed, demoted, signed out)."""
        self._ensure_running()
        self._watches[user_id].add(on_change)
        try:
            yield
        finally:
            self._watches[user_id].discard(on_change)
            if not self._watches[user_id]:
                del self._watches[user_id]

    def dispatch(self, workspace_id: int, topic: str) -> None:
        for sub in list(self._subs.get(workspace_id, ())):
            sub.notify(topic)

    def dispatch_user(self, user_id: int) -> None:
        for on_change in list(self._watches.get(user_id, ())):
            on_change()

    def _tell_all(self, topic: str) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.notify(topic)

    def _access_may_have_changed(self) -> None:
        # Access notices may have been lost too: every stream re-checks.
        for watches in list(self._watches.values()):
            for on_change in list(watches):
                on_change()

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._ready.clear()
            self._task = asyncio.create_task(self._listen_forever(), name="live-hub")

    async def _listen_forever(self) -> None:
        delay = BACKOFF_FIRST_SECONDS
        first = True
        while True:
            try:
                await self._listen(resync=not first)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # connection lost: pause, reconnect, then resync
                if self._ready.is_set() or first:  # log once per outage, not per attempt
                    log.warning("live hub lost Redis (%s); reconnecting", error)
                    self._ready.clear()
                    self._tell_all(PAUSED)
                    delay = BACKOFF_FIRST_SECONDS
                first = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX_SECONDS)

    async def _listen(self, *, resync: bool) -> None:
        client: Redis = self._connect()
        pattern, user_pattern = channel_pattern(), user_channel_pattern()
        prefix, user_prefix = pattern[:-1], user_pattern[:-1]
        async with client.pubsub() as pubsub:
            await pubsub.psubscribe(pattern, user_pattern)
            if resync:
                log.warning("live hub has Redis again; open pages resync")
                self._tell_all(EVERYTHING)
                self._access_may_have_changed()
            self._ready.set()
            while True:
                message = await pubsub.get_message(timeout=PING_SECONDS)
                if message is None:
                    await pubsub.ping()
                    continue
                if message.get("type") != "pmessage":
                    continue
                channel = _text(message["channel"])
                if channel.startswith(user_prefix):
                    self._dispatch_user(channel[len(user_prefix) :])
                    continue
                try:
                    workspace_id = int(channel[len(prefix) :])
                    topic = json.loads(_text(message["data"]))["topic"]
                except (ValueError, KeyError, TypeError):
                    log.warning("ignored malformed notice on %s", channel)
                    continue
                self.dispatch(workspace_id, topic)

    def _dispatch_user(self, suffix: str) -> None:
        try:
            self.dispatch_user(int(suffix))
        except ValueError:
            log.warning("ignored malformed access notice for %r", suffix)

    async def close(self) -> None:
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        self._ready.clear()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


hub = Hub()
