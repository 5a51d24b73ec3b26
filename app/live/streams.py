"""The SSE streams every live page uses: state first, then follow.

Shared views (render once, fan out; see app.live.views):

    return live(request, lambda viewer: LibraryView(viewer, f))

Private regions (rendered for this one stream):

    return follow(request, {"activity"}, render)

`render(changed)` returns the HTML of the regions to patch (each an element
with an id; Datastar morphs it into place). It is called once with every
topic when the stream opens - after the subscription is live, so nothing
committed in between is missed - and again for each batch of changed topics.

Either way the stream re-checks its viewer whenever their access may have
changed (a notice on their own channel, or a patch the view's group found
they may no longer see): a signed-out or removed person's stream is cut with
a notice; a person whose role changed moves to the view of their new role.

The top bar's workspace name (or switcher) and the person's name are part of
every live page's state: a stream sends them when it opens and again whenever
it re-checks its viewer, so a renamed workspace or a new display name (a notice
on the person's own channel) shows at once.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from datastar_py.litestar import DatastarResponse
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE
from litestar import Request

from app.accounts.guards import member_of
from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.core import db, i18n
from app.core.i18n import _
from app.live.fanout import Client, fanout
from app.live.hub import hub
from app.live.views import Audience, LiveView

Render = Callable[[set[str]], Awaitable[Iterable[str]]]
ViewFactory = Callable[[Viewer], LiveView | None]

KEEPALIVE_SECONDS = 20.0
# An SSE comment: keeps proxies from closing a quiet stream.
KEEPALIVE = DatastarEvent(": keepalive\n\n")
# Streams end after this long; the browser reconnects at once (retry: 'always')
# and the reconnect re-checks the session and re-sends the whole state.
MAX_STREAM_SECONDS = 15 * 60.0

# The attribute a page puts on its root to open its stream. Datastar closes a
# GET stream while its tab is hidden and reopens it on return (openWhenHidden
# is false for GET), so background tabs hold no connection.
# The header marks the request as a live stream (app.web.errors answers it in kind).
LIVE_STREAM_HEADER = "Newsdesk-Live-Stream"
STREAM_OPTIONS = (
    "{retry: 'always', retryMaxCount: 1000000, retryMaxWait: 15000,"
    f" headers: {{'{LIVE_STREAM_HEADER}': '1'}}}}"
)


def stream_attribute(url: str) -> str:
    """The `data-init` value that opens `url` as this page's live stream."""
    return f"@get('{url}', {STREAM_OPTIONS})"


def audience_of(viewer: Viewer) -> Audience:
    """What a shared render of a page may depend on: role, language, time zone."""
    if viewer.role is None:
        raise ValueError("a live view needs a member")
    return Audience.of(viewer.role, i18n.active_language(), viewer.time_zone)


def live(
    request: Request, make_view: ViewFactory, *, permission: Permission = Permission.DRAFT_VIEW
) -> DatastarResponse:
    """A stream of the shared view `make_view(viewer)` builds for the viewer.

    `permission` is what the page's guard asks; a re-check that finds it gone cuts the stream.
    """
    # Encoded once per view and shared: the bytes pass through Litestar's Stream as they are.
    return DatastarResponse(_events(request, make_view, permission))  # type: ignore[arg-type]


# How often, at most, a busy view re-renders: an import's job page and list, and the
# activity log, change dozens of times a second while an import runs, and each render
# (~10 ms of CPU for a job page) is taken from the import on a small machine.
BUSY_VIEW_SECONDS = 0.25

_private_keys = itertools.count()


class _PrivateView(LiveView):
    """A view nobody shares: `render(changed)` is the whole of it."""

    def __init__(
        self,
        workspace_id: int,
        topics: set[str],
        render: Render,
        audience: Audience,
        min_interval: float,
    ):
        self.key = ("private", next(_private_keys))
        self.workspace_id = workspace_id
        self.topics = frozenset(topics)
        self.audience = audience
        self.min_interval = min_interval
        self._render = render

    async def load(self, changed: set[str]) -> list[str]:
        return list(await self._render(changed))

    def render_state(self, model: Any) -> list[str]:
        return list(model)


def follow(
    request: Request, topics: set[str], render: Render, *, min_interval: float = 0.0
) -> DatastarResponse:
    """A stream of `render(changed)` for the viewer, re-rendered when `topics` change (at most
    every `min_interval` seconds: LiveView)."""
    viewer, workspace_id = member_of(request)
    view = _PrivateView(workspace_id, topics, render, audience_of(viewer), min_interval)

    def same_role_only(again: Viewer) -> LiveView | None:
        # `render` was made for the old role: the browser reconnects for the new one.
        return view if again.role == viewer.role else None

    return live(request, same_role_only)


async def _events(
    request: Request, make_view: ViewFactory, permission: Permission
) -> AsyncIterator[bytes | DatastarEvent]:
    viewer, _workspace_id = member_of(request)
    view = make_view(viewer)
    if view is None:
        return
    client = Client(viewer.session_id)
    deadline = time.monotonic() + MAX_STREAM_SECONDS
    with hub.watch_user(viewer.user_id, client.flag_recheck):
        # Watched first, then read: a rename or new name after this read makes it read again.
        client.send(await _top_bar(viewer))
        while True:
            async with fanout.join(view, client) as group:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    data = await client.take(min(KEEPALIVE_SECONDS, left))
                    if data:
                        yield data
                    if client.behind:
                        await group.catch_up(client)
                        continue
                    if client.recheck:
                        client.recheck = False
                        again, now = await _recheck(request, view, make_view, permission)
                        if isinstance(again, str):
                            yield SSE.patch_elements(again)
                            return
                        if again is None or now is None:  # the browser reconnects afresh
                            return
                        # The top bar's names as they are now: with the next patch, or alone.
                        bar = await _top_bar(now)
                        if client.behind:
                            yield bar
                        else:
                            client.send(bar)
                        if again.key != view.key:
                            view = again
                            break  # to the group of its new view
                        continue
                    if not data:
                        yield KEEPALIVE


async def _top_bar(viewer: Viewer) -> bytes:
    """The patch of the top bar's workspace name or switcher and the person's name, read now
    (one event, each element morphed by its id). Not a live region of the workspace's channel:
    a workspace's name is in the switcher of members working in another one, and a person's
    name in their pages of every workspace, so a rename or a new display name tells each
    person on their own channel (`watch_user`)."""
    from app.web.pages import top_bar

    return SSE.patch_elements(await top_bar(viewer)).encode()


async def _recheck(
    request: Request, view: LiveView, make_view: ViewFactory, permission: Permission
) -> tuple[LiveView | str | None, Viewer | None]:
    """The view the viewer may see now - the same, another, or a notice that cuts the
    stream - and the viewer as read now."""
    from app.accounts.middleware import identify
    from app.web.pages import lost_access
    from app.web.templating import render_block

    with db.system():  # who they are is read across workspaces, as the middleware does
        viewer = await identify(request.scope)
    if viewer is None:
        return render_block("errors/error.html", "session_ended", request), None
    if viewer.workspace_id != view.workspace_id or not viewer.can(permission):
        notice = render_block(
            "errors/error.html",
            "notice",
            request,
            title=_("Not allowed"),
            detail=lost_access(),
        )
        return notice, None
    if viewer.role == view.audience.role:
        return view, viewer
    return make_view(viewer), viewer
