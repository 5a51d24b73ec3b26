"""Error responses: pages in the layout for people, JSON for the API.

Nothing here leaks internals: a 500 says that something failed and logs the
rest. A browser whose session ended while a live stream reconnects gets a
small region telling them to sign in again, instead of an endless retry.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from functools import wraps
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

from datastar_py.litestar import DatastarResponse
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE
from litestar import MediaType, Request, Response
from litestar.exceptions import (
    HTTPException,
    NotAuthorizedException,
    NotFoundException,
    PermissionDeniedException,
    ValidationException,
)
from litestar.response import Redirect, Template
from litestar.response.base import ASGIResponse
from litestar.types import Receive, Scope, Send

from app.accounts.guards import NoWorkspace
from app.accounts.middleware import API_PREFIX, identify, language_for
from app.accounts.types import AccountError, Viewer
from app.core import db, i18n, outage
from app.core.i18n import N_, _
from app.live.fanout import PAUSED_SIGNAL
from app.live.streams import KEEPALIVE, KEEPALIVE_SECONDS, LIVE_STREAM_HEADER
from app.web.pages import is_datastar, lost_access
from app.web.templating import render_block

log = logging.getLogger(__name__)

# When a page answered 503 for a database that is away may be asked again (seconds).
RETRY_AFTER_SECONDS = 5


def _is_api(request: Request) -> bool:
    return request.url.path.startswith(API_PREFIX)


def _json(status: int, detail: str) -> Response:
    return Response({"status_code": status, "detail": detail}, status_code=status)


Handler = Callable[[Request, Exception], Response]


class _InViewerLanguage(Response):
    """An error response built and rendered in the viewer's language.

    Litestar renders an exception handler's response after the middleware that
    activated the language has unwound (and before any middleware ran, for an
    unknown address or a refused CSRF token), so this identifies the viewer
    itself when needed and builds the real response inside their language.
    """

    def __init__(self, build: Callable[[], Response]) -> None:
        super().__init__(content=None)
        self.build = build

    def to_asgi_response(self, app: Any, request: Request, **kwargs: Any) -> ASGIResponse:
        return _LocalisedASGI(self.build, app, request, kwargs)


class _LocalisedASGI(ASGIResponse):
    def __init__(
        self, build: Callable[[], Response], app: Any, request: Request, kwargs: dict[str, Any]
    ) -> None:
        self.build, self.app, self.request, self.kwargs = build, app, request, kwargs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if "user" not in scope:  # the authentication middleware did not run (or failed)
            scope["user"] = await _identify_if_reachable(scope)
        token = i18n.activate(language_for(scope, scope["user"]))
        try:
            response = self.build().to_asgi_response(self.app, self.request, **self.kwargs)
            await response(scope, receive, send)
        finally:
            i18n._active.reset(token)


async def _identify_if_reachable(scope: Scope) -> Viewer | None:
    """The viewer, or nobody when PostgreSQL is away (the page then says so)."""
    try:
        return await identify(scope)
    except Exception as error:
        if not db.unreachable(error):
            raise
        return None


def _in_viewer_language(handler: Handler) -> Handler:
    @wraps(handler)
    def localised(request: Request, error: Exception) -> Response:
        return _InViewerLanguage(lambda: handler(request, error))

    return localised


def _error_page(
    request: Request, status: int, title: str, detail: str, *, reload_after: int | None = None
) -> Response:
    """The error for people (a page, or a notice for a Datastar request) or JSON for the API.
    `reload_after`: a page that may work again soon reloads itself then (GET only: reloading
    after a POST would send the form again or lose what was typed)."""
    if _is_api(request):
        return _json(status, detail)
    if is_datastar(request):
        html = render_block(
            "errors/error.html", "notice", request=request, title=title, detail=detail
        )
        return Response(html, status_code=200, media_type=MediaType.HTML)
    return Template(
        template_name="errors/error.html",
        context={
            "viewer": request.scope.get("user"),
            "workspaces": [],
            "section": "",
            "status": status,
            "title": title,
            "detail": detail,
            "reload_after": reload_after if request.method == "GET" else None,
        },
        status_code=status,
    )


def not_signed_in(request: Request, error: Exception) -> Response:
    if _is_api(request):
        return _json(401, _("Send a valid API token as 'Authorization: Bearer <token>'."))
    if is_datastar(request):
        html = render_block("errors/error.html", "session_ended", request=request)
        return Response(html, status_code=200, media_type=MediaType.HTML)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(f"/login?next={quote(target, safe='/')}", status_code=303)


def no_workspace(request: Request, error: Exception) -> Response:
    if is_datastar(request):
        # From a page opened while they had a workspace: they were removed from it, and
        # "not a member of any workspace yet" would read as if they never had one.
        return _error_page(request, 403, _("Not allowed"), lost_access())
    if _is_api(request):
        return _error_page(request, 403, _("No workspace"), str(getattr(error, "detail", "")))
    return Redirect("/welcome", status_code=303)


def forbidden(request: Request, error: Exception) -> Response:
    detail = _detail_of(error)
    if detail == "CSRF token verification failed":
        detail = _("This form has expired. Reload the page and try again.")
    return _error_page(request, 403, _("Not allowed"), detail)


def not_found(request: Request, error: Exception) -> Response:
    return _error_page(request, 404, _("Not found"), _("There is nothing at this address."))


def _detail_of(error: Exception) -> str:
    """The error's message for people; Litestar's own English texts are replaced by ours.

    Our code raises with text already through `_()`; Litestar raises with its status
    phrase ("Method Not Allowed") or a parser's message ("JSON is malformed: ...").
    """
    detail = str(getattr(error, "detail", "") or "")
    status = getattr(error, "status_code", 400)
    if detail.startswith("JSON is malformed"):
        return _("The request body is not valid JSON.")
    if not detail or detail in _PHRASES or detail.startswith(_LITESTAR_TEXTS):
        return _(_STATUS_TEXTS.get(status, N_("The request could not be handled.")))
    return detail


# What Litestar's bare status errors mean, for people (N_: extracted, translated when used).
_STATUS_TEXTS = {
    400: N_("The request could not be understood."),
    403: N_("You may not do this."),
    404: N_("There is nothing at this address."),
    405: N_("This address does not accept this kind of request."),
    413: N_("The request is too large."),
    415: N_("This kind of content is not accepted here."),
    429: N_("Too many requests. Wait a moment and try again."),
}
_PHRASES = {status.phrase for status in HTTPStatus}
# How Litestar's own messages for a malformed request begin (they name no field of ours).
_LITESTAR_TEXTS = (
    "Validation failed for",
    "Request Entity Too Large",
    "Invalid content-length",
    "Invalid multipart",
    "Unexpected eof",
    "multipart boundary",
    "Invalid host header",
    "Invalid HTTP method",
)


def bad_request(request: Request, error: Exception) -> Response:
    detail = _detail_of(error)
    if isinstance(error, ValidationException) and error.extra:
        detail = _("Some fields are missing or malformed: %(fields)s") % {
            "fields": ", ".join(str(e.get("key", "")) for e in error.extra if isinstance(e, dict))
        }
    return _error_page(request, 400, _("Bad request"), detail)


def account_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, AccountError)
    return _error_page(request, error.status, _("That did not work"), error.message)


def http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if error.status_code >= 500:
        log.error("HTTP %s on %s: %s", error.status_code, request.url.path, error.detail)
        return _error_page(
            request, error.status_code, _("Something went wrong"), _("Please try again.")
        )
    return _error_page(request, error.status_code, _("That did not work"), _detail_of(error))


def server_error(request: Request, error: Exception) -> Response:
    if db.unreachable(error):
        return database_away(request, error)
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return _error_page(
        request, 500, _("Something went wrong"), _("The error was logged. Please try again.")
    )


def database_away(request: Request, error: Exception) -> Response:
    """PostgreSQL is away (a restart, an outage): 503, asking to come back in a moment. A
    live page's stream pauses (its banner says so) and ends when the database is back, and
    the page reconnects for its whole state."""
    outage.database.failed(error)
    if request.headers.get(LIVE_STREAM_HEADER):
        return DatastarResponse(_paused_until_the_database_is_back())
    response = _error_page(
        request,
        503,
        _("Newsdesk cannot reach its database"),
        _("Nothing is lost: this works again once the database is back. Try again in a moment."),
        reload_after=RETRY_AFTER_SECONDS,
    )
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


async def _paused_until_the_database_is_back() -> AsyncIterator[DatastarEvent]:
    yield SSE.patch_signals({PAUSED_SIGNAL: True})
    while not await outage.database.back(timeout=KEEPALIVE_SECONDS):
        yield KEEPALIVE


EXCEPTION_HANDLERS = {
    error: _in_viewer_language(handler)
    for error, handler in {
        NotAuthorizedException: not_signed_in,
        NoWorkspace: no_workspace,
        PermissionDeniedException: forbidden,
        NotFoundException: not_found,
        ValidationException: bad_request,
        AccountError: account_error,
        HTTPException: http_error,
        Exception: server_error,
    }.items()
}
