"""A TCP proxy in front of a real server, cut and restored on demand: what a restart or an
outage of PostgreSQL looks like from the app - its connections reset, new ones refused -
without touching the server the rest of the suite shares.

It runs on an event loop of its own, in a thread: a connection the app opens synchronously
(Piccolo asks the server's version so, on a loop of its own) must not wait for the test's
loop to serve it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


class TcpProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    @property
    def listening(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        """Listen (again, on the same port once it has one)."""
        await self._on_own_loop(self._start())

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        await self._on_own_loop(self._cut())

    async def close(self) -> None:
        if self.listening:
            await self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join, 5)

    async def _on_own_loop(self, work: Coroutine[Any, Any, None]) -> None:
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._pipes):
            writer.transport.abort()
        self._pipes.clear()
        await self._server.wait_closed()
        self._server = None

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._pipes.update((writer, up_writer))
        await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        self._pipes.difference_update((writer, up_writer))


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.transport.abort()  # one side gone: the other goes too
