"""DemoServer: a small HTTP/1.1 server on loopback with a route table.

The offline demo's platform servers (and tests) answer in the platforms'
real wire formats; this is only the plumbing they share. h11 (httpx's own
HTTP/1.1 parser) reads requests and writes responses, with keep-alive.
Every request is recorded in `hits`, so a test can prove what was asked.

In-process: `await server.start()` / `await server.stop()`. For `make demo`
and the e2e suite, `DemoThread` runs servers on an event loop of its own in a
daemon thread, on ports known before the Newsdesk processes start.

Behind EGRESS_DIVERT a request carries its original origin in the
`Forwarded` header (`DemoRequest.origin`): build absolute URLs (Links,
redirects, permalinks) from it, never from the loopback address, which
egress refuses to reach directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json as jsonlib
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import h11

log = logging.getLogger(__name__)

IDLE_SECONDS = 30.0  # a keep-alive connection with no request for this long is closed
MAX_BODY = 1_000_000  # request bodies are small (XRPC logins, form posts)
_FORWARDED = re.compile(r'(host|proto)="?([^";,]+)"?', re.IGNORECASE)


@dataclass(frozen=True)
class DemoRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes = b""
    params: dict[str, str] = field(default_factory=dict)  # the route regex's named groups
    at: float = 0.0  # time.monotonic() when it arrived

    def arg(self, name: str, default: str = "") -> str:
        """The first value of query parameter `name`."""
        values = self.query.get(name)
        return values[0] if values else default

    def json(self) -> Any:
        return jsonlib.loads(self.body or b"null")

    @property
    def origin(self) -> str:
        """The origin the client meant: `Forwarded` (set by EGRESS_DIVERT), else Host."""
        found = dict(
            (key.lower(), value)
            for key, value in _FORWARDED.findall(self.headers.get("forwarded", ""))
        )
        host = found.get("host") or self.headers.get("host", "127.0.0.1")
        return f"{found.get('proto', 'http')}://{host}"


@dataclass(frozen=True)
class DemoResponse:
    status: int = 200
    headers: Mapping[str, str] | Sequence[tuple[str, str]] = ()
    body: bytes | str = b""
    json: Any = None  # when set, the body is this as JSON (application/json)
    delay: float = 0.0  # seconds before answering (slow servers)

    def encoded(self) -> tuple[list[tuple[str, str]], bytes]:
        items = list(self.headers.items() if isinstance(self.headers, Mapping) else self.headers)
        names = {name.lower() for name, _ in items}
        if self.json is not None:
            body = jsonlib.dumps(self.json, ensure_ascii=False).encode()
            default_type = "application/json; charset=utf-8"
        elif isinstance(self.body, str):
            body, default_type = self.body.encode(), "text/plain; charset=utf-8"
        else:
            body, default_type = self.body, "application/octet-stream"
        if "content-type" not in names and (body or self.json is not None):
            items.append(("Content-Type", default_type))
        items.append(("Content-Length", str(len(body))))
        return items, body


Handler = Callable[[DemoRequest], DemoResponse | Awaitable[DemoResponse]]


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler


def not_found(request: DemoRequest) -> DemoResponse:
    return DemoResponse(404, body=f"nothing at {request.path}\n")


class DemoServer:
    """A loopback HTTP server; subclasses add their routes in `__init__`."""

    name = "demo"

    def __init__(self) -> None:
        self.routes: list[_Route] = []
        self.hits: list[DemoRequest] = []
        self.port = 0
        self.fallback: Handler = not_found  # answers paths no route matches
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    def add(self, method: str, path_regex: str, handler: Handler) -> None:
        """Answer `method` (GET also answers HEAD) on paths matching `path_regex` in full."""
        self.routes.append(_Route(method.upper(), re.compile(path_regex), handler))

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base + path

    def hits_of(self, path: str) -> list[DemoRequest]:
        return [hit for hit in self.hits if hit.path == path]

    async def start(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self._server = await asyncio.start_server(self._serve, host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):  # idle keep-alives and slow answers end now
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)
        self._server = None

    async def __aenter__(self) -> DemoServer:
        if self._server is None:
            await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def respond(self, request: DemoRequest) -> DemoResponse:
        """Route `request`: 404 for an unknown path, 405 for a known path's other methods."""
        allowed: list[str] = []
        for route in self.routes:
            found = route.pattern.fullmatch(request.path)
            if found is None:
                continue
            if route.method == request.method or (
                route.method == "GET" and request.method == "HEAD"
            ):
                params = {k: v for k, v in found.groupdict().items() if v is not None}
                return await _call(route.handler, replace(request, params=params))
            allowed.append(route.method)
        if allowed:
            return DemoResponse(405, {"Allow": ", ".join(sorted(set(allowed)))}, "")
        return await _call(self.fallback, request)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        try:
            while True:
                request = await _read(conn, reader)
                if request is None:
                    break
                self.hits.append(request)
                try:
                    response = await self.respond(request)
                except Exception:
                    log.exception(
                        "demo server %s: %s %s failed", self.name, request.method, request.path
                    )
                    response = DemoResponse(500, body="the demo server failed\n")
                await asyncio.sleep(response.delay)
                await _write(conn, writer, request.method, response)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, TimeoutError, h11.ProtocolError, asyncio.IncompleteReadError):
            pass  # the client went away or spoke nonsense; the connection just ends
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _call(handler: Handler, request: DemoRequest) -> DemoResponse:
    answer = handler(request)
    if inspect.isawaitable(answer):
        return await answer
    return answer


async def _read(conn: h11.Connection, reader: asyncio.StreamReader) -> DemoRequest | None:
    """The next whole request on the connection, or None when the client closed it."""
    head: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            async with asyncio.timeout(IDLE_SECONDS):
                conn.receive_data(await reader.read(65536))
            continue
        if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
            return None
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                raise h11.LocalProtocolError("request body too large")
        elif isinstance(event, h11.EndOfMessage) and head is not None:
            parts = urlsplit(head.target.decode("latin-1"))
            headers = {
                name.decode("latin-1").lower(): value.decode("latin-1")
                for name, value in head.headers
            }
            return DemoRequest(
                head.method.decode("ascii").upper(),
                parts.path,
                parse_qs(parts.query, keep_blank_values=True),
                headers,
                bytes(body),
                at=time.monotonic(),
            )


async def _write(
    conn: h11.Connection, writer: asyncio.StreamWriter, method: str, response: DemoResponse
) -> None:
    headers, body = response.encoded()
    writer.write(conn.send(h11.Response(status_code=response.status, headers=headers)) or b"")
    if body and method != "HEAD" and response.status not in (204, 304):
        writer.write(conn.send(h11.Data(data=body)) or b"")
    writer.write(conn.send(h11.EndOfMessage()) or b"")
    await writer.drain()


class DemoThread:
    """Demo servers on an event loop of their own in a daemon thread.

    The e2e suite and `make demo`'s tests need the servers on ports known
    before the Newsdesk processes start, while their own loop stays free.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._servers: list[DemoServer] = []
        self._thread.start()

    def start(self, server: DemoServer, port: int = 0) -> DemoServer:
        asyncio.run_coroutine_threadsafe(server.start(port), self._loop).result(5)
        self._servers.append(server)
        return server

    def stop(self) -> None:
        for server in self._servers:
            asyncio.run_coroutine_threadsafe(server.stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
