"""Render once, fan out: one `Group` per distinct view, one `Client` per open stream.

A group holds one hub subscription for its view. On a notice it loads the
state once, checks once that every client may still see it, turns the
change into patches (`views.delta`, else the whole region), encodes the SSE
bytes once and hands the same bytes to every client's outbox.

A client's outbox is bounded: a client that falls behind (a slow network)
drops what it had queued and gets the whole state instead, so a slow
browser costs neither memory nor the other clients' latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Hashable
from typing import Any

from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE

from app.accounts import queries as account_queries
from app.core import db, i18n, outage
from app.live.hub import EVERYTHING, PAUSED, hub
from app.live.views import Keyed, LiveView, delta

log = logging.getLogger(__name__)

# The signal pages read to show "live updates paused - reconnecting" (templates/base.html).
PAUSED_SIGNAL = "_livePaused"
PAUSED_ON = SSE.patch_signals({PAUSED_SIGNAL: True}).encode()
PAUSED_OFF = SSE.patch_signals({PAUSED_SIGNAL: False}).encode()
# A client with more than this waiting has fallen behind: it gets the whole state next.
MAX_OUTBOX_BYTES = 512 * 1024
RETRY_AFTER_ERROR_SECONDS = 1.0
# After a notice a view waits this long for more before it renders: a burst of
# notices (a topic run storing forty articles) costs one render, not forty.
COALESCE_SECONDS = 0.02
# A view spends at most this share of its time rendering: one whose render is costly (a
# search over a large library while an import stores dozens of articles a second) waits
# three times its last render before the next, instead of rendering back to back.
RENDER_SHARE = 0.25


def encode(events: list[DatastarEvent]) -> bytes:
    return "".join(events).encode()


class Client:
    """One open stream: the bytes waiting for it, and why it must look again."""

    def __init__(self, session_id: int | None) -> None:
        self.session_id = session_id
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._wake = asyncio.Event()
        self.behind = False  # dropped its queue: owes the whole state
        self.recheck = False  # its access may have changed

    def send(self, data: bytes) -> None:
        if self.behind:
            return
        # The limit bounds a backlog, not one state: a whole wall of ten full columns may be
        # larger than it, and an empty outbox always takes it (else it could never catch up).
        if self._size and self._size + len(data) > MAX_OUTBOX_BYTES:
            self.behind = True
            self._chunks.clear()
            self._size = 0
        else:
            self._chunks.append(data)
            self._size += len(data)
        self._wake.set()

    def flag_recheck(self) -> None:
        self.recheck = True
        self._wake.set()

    async def take(self, timeout: float) -> bytes:
        """What is waiting, after at most `timeout` seconds (b"" if nothing)."""
        if not self._chunks and not self.behind and not self.recheck:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        return data


class Group:
    """Every client of one distinct view, and the one render they share."""

    def __init__(self, view: LiveView) -> None:
        self.view = view
        self.clients: set[Client] = set()
        self.members = 0  # streams joining or joined; the group ends at zero
        self._lock = asyncio.Lock()
        self._model: Any = None
        self._loaded = False
        self._keyed: Keyed | None = None
        self._state: bytes | None = None
        self._paused = False
        self._subscribed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"live-view-{self.view.key!r}")

    def stop(self) -> asyncio.Task[None] | None:
        """Cancel the group's task (not awaited: a closing stream must not wait)."""
        if self._task is not None:
            self._task.cancel()
        return self._task

    async def join(self, client: Client) -> None:
        """Send `client` the current state, then every patch after it."""
        await self._subscribed.wait()  # subscribed before the state is read
        async with self._lock:
            if not self._loaded:
                await self._load(set(self.view.topics))
            client.send(self._state_bytes())
            self.clients.add(client)

    async def catch_up(self, client: Client) -> None:
        """A client that fell behind gets the whole state, in order with later patches."""
        async with self._lock:
            client.behind = False
            client.send(self._state_bytes())

    async def _run(self) -> None:
        i18n.activate(self.view.audience.language)
        async with hub.subscribe(self.view.workspace_id, set(self.view.topics)) as sub:
            self._paused = not hub.connected
            self._subscribed.set()
            loop = asyncio.get_running_loop()
            rendered, spent = -self.view.min_interval, 0.0  # the last render: start, seconds
            while True:
                changed = await sub.next_change(60.0)
                if not changed:
                    continue
                # A burst of notices: one render (a busy view waits its interval, a costly
                # one its share).
                interval = max(self.view.min_interval, spent / RENDER_SHARE)
                await asyncio.sleep(max(COALESCE_SECONDS, rendered + interval - loop.time()))
                changed |= await sub.next_change(0)
                rendered = loop.time()
                try:
                    async with self._lock:
                        await self._apply(changed)
                except Exception as error:  # try again as a resync
                    await self._wait_after(error)
                    sub.notify(EVERYTHING)
                spent = loop.time() - rendered

    async def _wait_after(self, error: Exception) -> None:
        """A render failed. PostgreSQL away: the pages say live updates are paused, and the
        view waits for it (one line in the log for the outage). Anything else: log it."""
        if not db.unreachable(error):
            log.exception("live view %r could not render; retrying", self.view.key)
            await asyncio.sleep(RETRY_AFTER_ERROR_SECONDS)
            return
        outage.database.failed(error)
        async with self._lock:
            self._pause()
        await outage.database.back()

    def _pause(self) -> None:
        """Tell the clients live updates stopped; the next whole state resumes them."""
        if not self._paused:
            self._paused = True
            self._state = None
            for client in self.clients:
                client.send(PAUSED_ON)

    async def _apply(self, changed: set[str]) -> None:
        topics = changed - {EVERYTHING, PAUSED}
        if topics:
            whole = EVERYTHING in changed or self._paused or not self._loaded
            old = self._keyed
            await self._load(topics)
            self._paused = False
            events = None if whole else delta(self.view, old, self._model)
            clients = await self._allowed_clients()
            data = self._state_bytes() if events is None else encode(events)
            if data:
                for client in clients:
                    client.send(data)
        if PAUSED in changed:
            self._pause()

    async def _load(self, topics: set[str]) -> None:
        self._model = await self.view.load(topics)
        self._keyed = self.view.keyed(self._model)
        self._state = None
        self._loaded = True

    def _state_bytes(self) -> bytes:
        if self._state is None:
            regions = [SSE.patch_elements(html) for html in self.view.render_state(self._model)]
            self._state = encode(regions) + (PAUSED_ON if self._paused else PAUSED_OFF)
        return self._state

    async def _allowed_clients(self) -> list[Client]:
        """The clients that may still see this view, asked once for all of them.

        Any other client is told to re-check (it is cut, or moves to its new view).
        """
        sessions = [c.session_id for c in self.clients if c.session_id is not None]
        roles = await account_queries.session_roles(self.view.workspace_id, sessions)
        allowed = []
        for client in list(self.clients):
            if client.session_id is not None and roles.get(client.session_id) == (
                self.view.audience.role
            ):
                allowed.append(client)
            else:
                client.flag_recheck()
        return allowed


class Fanout:
    """The process's groups, by view key."""

    def __init__(self) -> None:
        self.groups: dict[Hashable, Group] = {}

    @contextlib.asynccontextmanager
    async def join(self, view: LiveView, client: Client) -> AsyncIterator[Group]:
        group = self.groups.get(view.key)
        if group is None:
            group = self.groups[view.key] = Group(view)
            group.start()
        group.members += 1
        try:
            await group.join(client)
            yield group
        finally:
            group.clients.discard(client)
            group.members -= 1
            if group.members == 0:
                if self.groups.get(view.key) is group:
                    del self.groups[view.key]
                group.stop()

    async def close(self) -> None:
        tasks = [group.stop() for group in self.groups.values()]
        self.groups.clear()
        for task in tasks:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await task


fanout = Fanout()
