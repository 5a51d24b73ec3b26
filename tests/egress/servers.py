"""A tiny HTTP/1.1 server on loopback for egress tests: one request per connection
(or, with `keep_alive`, up to that many, without announcing the close).

A handler maps the request it saw to a `Reply`. The server records every
connection and request, so a test can prove a request never arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""  # sent with Content-Length
    chunks: Iterable[bytes] | None = None  # sent chunked instead of `body`
    delay: float = 0.0  # seconds before the status line
    drip: float = 0.0  # seconds between chunks
    hold: asyncio.Event | None = None  # the status line waits for it (a test's go-ahead)


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]  # lower-cased names
    body: bytes


Handler = Callable[[Seen], Reply]


class Server:
    def __init__(
        self, handler: Handler, tls: ssl.SSLContext | None = None, *, keep_alive: int = 0
    ) -> None:
        self.handler = handler
        self.tls = tls
        self.keep_alive = keep_alive  # requests a connection serves without "Connection: close"
        self.connections = 0
        self.requests: list[Seen] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connected = asyncio.Event()  # set at the first connection

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):  # slow and endless replies end with the test
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.connected.set()
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            for _ in range(max(self.keep_alive, 1)):
                seen = await _read_request(reader)
                self.requests.append(seen)
                await _write_reply(writer, self.handler(seen), close=not self.keep_alive)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass  # the client went away, which is often the point of the test
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> Seen:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    line, *lines = head.split("\r\n")
    method, target, _ = line.split(" ", 2)
    headers = {}
    for item in filter(None, lines):
        name, _, value = item.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Seen(method, target, headers, body)


async def _write_reply(writer: asyncio.StreamWriter, reply: Reply, *, close: bool) -> None:
    if reply.hold is not None:
        await reply.hold.wait()
    await asyncio.sleep(reply.delay)
    names = {name.lower() for name, _ in reply.headers}
    headers = [*reply.headers, *([("Connection", "close")] if close else [])]
    if reply.chunks is not None:
        headers.append(("Transfer-Encoding", "chunked"))
    elif "content-length" not in names:
        headers.append(("Content-Length", str(len(reply.body))))
    head = f"HTTP/1.1 {reply.status} X\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)
    writer.write(head.encode("latin-1") + b"\r\n")
    if reply.chunks is None:
        writer.write(reply.body)
    else:
        for chunk in reply.chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
            await asyncio.sleep(reply.drip)
        writer.write(b"0\r\n\r\n")
    await writer.drain()


@contextlib.asynccontextmanager
async def serve(
    handler: Handler | Reply, tls: ssl.SSLContext | None = None, *, keep_alive: int = 0
) -> AsyncIterator[Server]:
    """A running server; a bare Reply answers every request the same."""
    fixed = handler
    server = Server(
        (lambda _: fixed) if isinstance(fixed, Reply) else fixed, tls, keep_alive=keep_alive
    )
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
