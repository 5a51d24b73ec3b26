"""Live streams without HTTP: a real session, a request scope, and the stream's events."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from litestar import Request

from app.accounts import queries as account_queries
from app.accounts import services as account_services
from app.core import db
from app.live.streams import KEEPALIVE


async def stream_request(user_id: int, path: str = "/x/stream") -> Request[Any, Any, Any]:
    """A request as the middleware leaves it: a fresh session cookie and its viewer."""
    session = await account_services.start_session(user_id)
    found = await account_queries.viewer_for_session(session.token)
    assert found is not None
    scope: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": b"",
        "headers": [(b"cookie", f"nd_session={session.token}".encode())],
        "user": found.viewer,
        "state": {},
    }
    request: Request[Any, Any, Any] = Request(scope)  # type: ignore[arg-type]
    request.scope["session_token"] = session.token  # type: ignore[typeddict-unknown-key]
    return request


async def next_event(stream: AsyncIterator[Any], timeout: float = 5.0) -> str:
    """The stream's next chunk as text, skipping keep-alives."""
    while True:
        chunk = await asyncio.wait_for(anext(stream), timeout)
        text = chunk.decode() if isinstance(chunk, bytes) else str(chunk)
        if text != KEEPALIVE:
            return text


async def ended(stream: AsyncIterator[Any], timeout: float = 5.0) -> list[str]:
    """Everything the stream sends until it ends (fails if it does not end in time)."""
    sent: list[str] = []

    async def drain() -> None:
        async for chunk in stream:
            sent.append(chunk.decode() if isinstance(chunk, bytes) else str(chunk))

    await asyncio.wait_for(drain(), timeout)
    return sent


async def sent_until(stream: AsyncIterator[Any], text: str, timeout: float = 5.0) -> str:
    """Everything the stream sends up to and with the chunk that holds `text` (fails if it
    does not come in time): a re-check sends the workspace bar as a chunk of its own before
    the view's state, which the view's group sends when it has rendered."""
    sent = ""
    async with asyncio.timeout(timeout):
        while text not in sent:
            sent += await next_event(stream, timeout)
    return sent


# The person's name in the top bar each stream sends with its state (app.live.streams).
_OWN_NAME = re.compile(r'<span id="top-bar-who" class="who">([^<]*)</span>')


def own_name(sent: str) -> str:
    """The person's name in the top bar `sent` carries (exactly one)."""
    found = _OWN_NAME.findall(sent)
    assert len(found) == 1, sent
    return str(found[0])


def without_own_name(sent: str) -> str:
    """What a stream sent, less the person's name: the part people of one view share."""
    return _OWN_NAME.sub("", sent)


async def display_name(user_id: int) -> str:
    with db.system():
        return str(await db.fetchval("SELECT display_name FROM users WHERE id = $1", user_id))


async def told_within(
    pubsub: Any, channels: dict[str, int], seconds: float, read: Callable[[], Awaitable[str]]
) -> list[tuple[int, str]]:
    """Who was told on their own channel within `seconds`, each with what `read` reads as
    they are told - on another connection, as a page's stream reads it."""
    told: list[tuple[int, str]] = []
    deadline = asyncio.get_running_loop().time() + seconds
    while (left := deadline - asyncio.get_running_loop().time()) > 0:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
        if message is not None:
            told.append((channels[message["channel"].decode()], await read()))
    return told
