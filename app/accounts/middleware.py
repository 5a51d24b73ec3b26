"""Who is asking: a session cookie for pages, a Bearer token for /api/v1 and /mcp.

The API accepts only Bearer tokens and pages only the session cookie, so a
cookie never authorises an API call (which is exempt from CSRF checks).
The person's language is activated for the rest of the request.
"""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from app.accounts import queries, services
from app.accounts.types import Viewer
from app.core import db, i18n

SESSION_COOKIE = "nd_session"
API_PREFIX = "/api/"
MCP_PATH = "/mcp"  # the MCP endpoint (app.web.mcp): Bearer tokens only, like the API


def _bearer_only(path: str) -> bool:
    return path.startswith(API_PREFIX) or path == MCP_PATH or path.startswith(MCP_PATH + "/")


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


def _cookie(scope: Scope, name: str) -> str | None:
    for part in _header(scope, b"cookie").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name and value:
            return value
    return None


async def identify(scope: Scope) -> Viewer | None:
    # A mounted app (/mcp) sees its path relative to the mount; the raw path is whole.
    raw = scope.get("raw_path")
    if _bearer_only(raw.decode("latin-1") if isinstance(raw, bytes) else scope["path"]):
        scheme, _, token = _header(scope, b"authorization").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        found = await queries.viewer_for_api_token(token.strip())
        if found and found.touch_due and found.viewer.api_token_id:
            await services.note_api_token_use(found.viewer.api_token_id)
        return found.viewer if found else None
    cookie = _cookie(scope, SESSION_COOKIE)
    if not cookie:
        return None
    found = await queries.viewer_for_session(cookie)
    if found and found.touch_due and found.viewer.session_id:
        await services.touch_session(found.viewer.session_id)
    return found.viewer if found else None


def language_for(scope: Scope, viewer: Viewer | None) -> str:
    """The viewer's chosen language, else the browser's (pages before sign-in).

    A browser always sends Accept-Language, so for pages the profile wins; an API or MCP
    client sends it only on purpose, so there an offered language it asks for wins.
    """
    header = _header(scope, b"accept-language")
    if viewer and viewer.api_token_id:
        return i18n.asked_language(header) or i18n.pick_language(viewer.locale, None)
    return i18n.pick_language(viewer.locale if viewer else None, header)


class AuthenticationMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    # Static files, probes and signed media need no identity (the media signature is the capability).
    should_bypass_for_scope = staticmethod(
        lambda scope: (
            scope["path"].startswith(("/static/", "/media/"))
            or scope["path"] in ("/healthz", "/readyz")
        )
    )

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        viewer = await identify(scope)
        scope["user"] = viewer
        scope["auth"] = (
            "token" if viewer and viewer.api_token_id else ("session" if viewer else None)
        )
        token = i18n.activate(language_for(scope, viewer))
        try:
            # Row-level security behind the request's own workspace filters.
            with db.bound_to(viewer.workspace_id if viewer else None):
                await next_app(scope, receive, send)
        finally:
            i18n._active.reset(token)
