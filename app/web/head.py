"""HEAD answers as GET does, without the body.

Litestar routes HEAD only to handlers declared for it (the static files): a HEAD on any
page, on /healthz or on a form's address answered 405, where HTTP has every GET address
take HEAD - link checkers, uptime monitors and `curl -I` ask so. So a HEAD to an address
with no HEAD handler runs as its GET - the same status, headers and redirect (a form's
address: 303 to its page, app/web/form_pages.py) - and the answer ends where the body
would begin. A live stream is cut there too: its server then tells it the client left.
"""

from __future__ import annotations

from typing import cast

from litestar import Litestar
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send
from litestar.utils import normalize_path


def answer_head_as_get(app: Litestar) -> None:
    """Make every GET address of `app` answer HEAD (addresses with their own HEAD keep it)."""
    handler: ASGIApp = app.asgi_handler

    async def head_as_get(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "HEAD" and not _takes_head(app, scope):
            as_get = cast("HTTPScope", {**scope, "method": "GET"})
            await handler(as_get, receive, _headers_only(send))
        else:
            await handler(scope, receive, send)

    app.asgi_handler = head_as_get


def _takes_head(app: Litestar, scope: Scope) -> bool:
    try:
        app.asgi_router.handle_routing(normalize_path(scope["path"]), "HEAD")
    except HTTPException:  # 405 (or 404): no HEAD handler here
        return False
    return True


def _headers_only(send: Send) -> Send:
    """`send` for a GET answering a HEAD: the status and headers (Content-Length as the GET
    has it), then an empty end in place of the body; whatever follows is dropped."""
    ended = False

    async def send_headers(message: Message) -> None:
        nonlocal ended
        if message["type"] == "http.response.start":
            await send(message)
        elif message["type"] == "http.response.body" and not ended:
            ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return send_headers
