"""The one SSE pattern every live page uses: state first, then follow.

    return follow(workspace_id, {"activity"}, render)

`render(changed)` returns the HTML of the regions to patch (each an element
with an id; Datastar morphs it into place). It is called once with every
topic when the stream opens - after the subscription is live, so nothing
committed in between is missed - and again for each batch of changed topics.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

from datastar_py.litestar import DatastarResponse
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE

from app.live.hub import hub

Render = Callable[[set[str]], Awaitable[Iterable[str]]]

KEEPALIVE_SECONDS = 20.0
# An SSE comment: keeps proxies from closing a quiet stream.
KEEPALIVE = DatastarEvent(": keepalive\n\n")
# Streams end after this long; the browser reconnects at once (retry: 'always')
# and the reconnect re-checks the session and re-sends the whole state.
MAX_STREAM_SECONDS = 15 * 60.0

# The attribute a page puts on its root to open its stream.
STREAM_OPTIONS = "{retry: 'always', retryMaxCount: 1000000, retryMaxWait: 15000}"


def stream_attribute(url: str) -> str:
    """The `data-init` value that opens `url` as this page's live stream."""
    return f"@get('{url}', {STREAM_OPTIONS})"


def follow(workspace_id: int, topics: set[str], render: Render) -> DatastarResponse:
    return DatastarResponse(_events(workspace_id, topics, render))


async def _events(
    workspace_id: int, topics: set[str], render: Render
) -> AsyncIterator[DatastarEvent]:
    deadline = time.monotonic() + MAX_STREAM_SECONDS
    async with hub.subscribe(workspace_id, topics) as subscription:
        for html in await render(set(topics)):
            yield SSE.patch_elements(html)
        while not subscription.closed and time.monotonic() < deadline:
            changed = await subscription.next_change(KEEPALIVE_SECONDS)
            if subscription.closed:
                break
            if not changed:
                yield KEEPALIVE
                continue
            for html in await render(changed):
                yield SSE.patch_elements(html)
