"""A live page's stream, held open in-process as a browser holds it."""

from __future__ import annotations

import asyncio


class LiveStream:
    """A Datastar stream of the app, read in-process the way a browser holds it open."""

    def __init__(self, web_app, client, path: str, headers: dict[str, str] | None = None) -> None:
        self.web_app, self.client, self.path = web_app, client, path
        self.headers = headers or {}
        self.received: list[str] = []
        self.finished = False  # the response's last part came (Litestar then waits for us)
        self._changed = asyncio.Event()
        self._task: asyncio.Task | None = None

    def _scope(self) -> dict:
        path, _, query = self.path.partition("?")
        cookies = "; ".join(f"{k}={v}" for k, v in self.client.cookies.items())
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [
                (b"host", b"testserver.local"),
                (b"cookie", cookies.encode()),
                (b"datastar-request", b"true"),
                *((k.lower().encode(), v.encode()) for k, v in self.headers.items()),
            ],
            "client": ("127.0.0.1", 40000),
            "server": ("testserver.local", 80),
        }

    async def __aenter__(self) -> LiveStream:
        async def send(message):
            if message["type"] == "http.response.body":
                if message.get("body"):
                    self.received.append(message["body"].decode())
                self.finished = not message.get("more_body", False)
                self._changed.set()

        async def receive():
            await asyncio.Event().wait()  # the browser stays connected

        self._task = asyncio.create_task(self.web_app(self._scope(), receive, send))
        return self

    @property
    def ended(self) -> bool:
        """The app ended the stream (a browser would reconnect)."""
        return self.finished or (self._task is not None and self._task.done())

    async def __aexit__(self, *_exc) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def until(self, text: str, timeout: float = 5.0) -> str:
        """Wait until `text` has been sent; return everything sent so far."""
        async with asyncio.timeout(timeout):
            while text not in "".join(self.received):
                await self._changed.wait()
                self._changed.clear()
        return "".join(self.received)
